package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Import paths of the binaries the harness builds.
const (
	gantryPkg    = "github.com/gantry-proxy/gantry/cmd/gantry"
	gantryDNSPkg = "github.com/gantry-proxy/gantry/cmd/gantry-dns"
	whoamiPkg    = "github.com/gantry-proxy/gantry/cmd/whoami"
)

var (
	binMu  sync.Mutex
	binDir string            // created on first build, removed by Main
	built  map[string]string // package -> binary path
	failed map[string]error  // package -> build error (not retried)
)

// Main runs the tests of a package and then removes the binaries built for
// them. Call it from TestMain: func TestMain(m *testing.M) { harness.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	binMu.Lock()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	binMu.Unlock()
	os.Exit(code)
}

// GantryBin returns the path of the gantry binary, building it on first use
// in this test process. A build failure fails t with the compiler output.
func GantryBin(t testing.TB) string { return binary(t, gantryPkg) }

// GantryDNSBin builds gantry-dns, the program holding lego's DNS-01
// providers, beside the gantry binary (where gantry looks for it) and
// returns its path. Call it before starting a gantry whose static
// configuration has a dnsChallenge; without it, gantry refuses the
// challenge as a gantry installed without gantry-dns does.
func GantryDNSBin(t testing.TB) string { return binary(t, gantryDNSPkg) }

// WhoamiBin returns the path of the whoami binary, building it on first use.
func WhoamiBin(t testing.TB) string { return binary(t, whoamiPkg) }

func binary(t testing.TB, pkg string) string {
	t.Helper()
	binMu.Lock()
	defer binMu.Unlock()
	if p, ok := built[pkg]; ok {
		return p
	}
	if err, ok := failed[pkg]; ok {
		t.Fatalf("harness: %v", err)
	}
	p, err := build(pkg)
	if err != nil {
		if failed == nil {
			failed = map[string]error{}
		}
		failed[pkg] = err
		t.Fatalf("harness: %v", err)
	}
	if built == nil {
		built = map[string]string{}
	}
	built[pkg] = p
	return p
}

// build compiles pkg into binDir. Called with binMu held.
func build(pkg string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	if binDir == "" {
		d, err := os.MkdirTemp("", "gantry-harness-")
		if err != nil {
			return "", fmt.Errorf("create binary dir: %w", err)
		}
		binDir = d
	}
	out := filepath.Join(binDir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return out, nil
}

// ModuleRoot returns the repository's root directory (where go.mod of
// module github.com/gantry-proxy/gantry is), failing t if not found.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	return root
}

// moduleRoot finds the directory holding go.mod, walking up from the
// working directory (go test runs tests in their package directory).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			// integration/* directories may hold helper modules of their own
			// (their go.mod names another module); keep walking past them.
			if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && isGantryModule(b) {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of module github.com/gantry-proxy/gantry above the working directory")
		}
		dir = parent
	}
}

func isGantryModule(gomod []byte) bool {
	return strings.HasPrefix(string(gomod), "module github.com/gantry-proxy/gantry\n")
}
