package harness

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	yaml "go.yaml.in/yaml/v3"
)

// ReadyTimeout bounds how long Start waits for gantry's entrypoints.
const ReadyTimeout = 30 * time.Second

// Gantry is a running gantry process.
type Gantry struct {
	*Process
	// Dir is the process's working directory (a fresh t.TempDir): the
	// store file lands here, and tests may put dynamic files here.
	Dir string
	// ConfigFile is the static configuration file passed as --configFile.
	ConfigFile string
	// EntryPoints maps each entrypoint name of the static configuration to
	// a dialable address ("127.0.0.1:port" when the host was empty).
	EntryPoints map[string]string
}

// Options start gantry in more ways than Start.
type Options struct {
	// Static is the static configuration; empty means no --configFile.
	Static string
	// Format is "yaml" (default) or "toml", choosing the file extension.
	Format string
	// Args are extra command-line arguments (flags, or a subcommand first).
	Args []string
	// Env holds extra "KEY=value" environment entries.
	Env []string
	// Dir is the working directory; empty means a new t.TempDir().
	Dir string
	// NoFile, when above 0, starts gantry with its open-file limit
	// (RLIMIT_NOFILE, soft and hard) set to NoFile, through /bin/sh's
	// ulimit -n, so the process cannot raise it.
	NoFile int
	// NoWait skips waiting for the entrypoints to accept connections. Use
	// it when Env or Args override entrypoint addresses: EntryPoints and
	// WaitReady know only the addresses written in Static.
	NoWait bool
}

// Start writes staticYAML to a file in a fresh directory, starts gantry with
// --configFile pointing at it (and env entries "KEY=value" added to the
// environment), and waits until every entrypoint in the static
// configuration accepts TCP connections. The process is stopped with
// SIGTERM when the test ends; its output is dumped if the test failed.
func Start(t testing.TB, staticYAML string, env ...string) *Gantry {
	t.Helper()
	return StartWith(t, Options{Static: staticYAML, Env: env})
}

// StartWith starts gantry as o says; see Start.
func StartWith(t testing.TB, o Options) *Gantry {
	t.Helper()
	bin := GantryBin(t)
	g := &Gantry{Dir: o.Dir}
	if g.Dir == "" {
		g.Dir = t.TempDir()
	}
	args := append([]string(nil), o.Args...)
	if o.Static != "" {
		ext := "yml"
		if o.Format == "toml" {
			ext = "toml"
		}
		g.ConfigFile = filepath.Join(g.Dir, "gantry."+ext)
		if err := os.WriteFile(g.ConfigFile, []byte(o.Static), 0o644); err != nil {
			t.Fatalf("harness: write static configuration: %v", err)
		}
		eps, err := entryPointAddrs(o.Static, ext)
		if err != nil {
			t.Fatalf("harness: read entrypoints from the static configuration: %v", err)
		}
		g.EntryPoints = eps
		args = append(args, "--configFile="+g.ConfigFile)
	}
	if o.NoFile > 0 {
		// "$0" "$@" are bin and args, passed through unquoted.
		script := fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, o.NoFile)
		args = append([]string{"-c", script, bin}, args...)
		bin = "/bin/sh"
	}
	g.Process = startProcess(t, "gantry", g.Dir, bin, args, o.Env)
	if !o.NoWait {
		g.WaitReady(t)
	}
	return g
}

// WaitReady waits until every entrypoint accepts TCP connections, failing t
// after ReadyTimeout or at once if gantry exits.
func (g *Gantry) WaitReady(t testing.TB) {
	t.Helper()
	for name, addr := range g.EntryPoints {
		Try(t, ReadyTimeout, func() error {
			if code, exited := g.ExitCode(); exited {
				return Permanent(fmt.Errorf("gantry exited with code %d before entrypoint %s listened", code, name))
			}
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				return fmt.Errorf("entrypoint %s: %w", name, err)
			}
			return c.Close()
		})
	}
}

// URL returns "http://<address of entrypoint ep>" plus path, failing t for
// an unknown entrypoint.
func (g *Gantry) URL(t testing.TB, ep, path string) string {
	t.Helper()
	a, ok := g.EntryPoints[ep]
	if !ok {
		t.Fatalf("harness: no entrypoint %q in the static configuration", ep)
	}
	return "http://" + a + path
}

// WriteFile atomically writes content to name inside dir (write to a
// temporary file, then rename), the way editors and config management
// replace files, so a watching provider never reads half a file.
func WriteFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	tmp, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(name)+"-*")
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	if _, err := tmp.WriteString(content); err != nil {
		t.Fatalf("harness: write %s: %v", p, err)
	}
	if err := tmp.Close(); err != nil {
		t.Fatalf("harness: close %s: %v", p, err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		t.Fatalf("harness: rename into %s: %v", p, err)
	}
	return p
}

// entryPointAddrs extracts entryPoints.<name>.address from a static
// configuration in YAML or TOML (keys case-insensitive), making each
// dialable: an empty host becomes 127.0.0.1 and a "/tcp" suffix is dropped.
// UDP entrypoints ("…/udp") are left out.
func entryPointAddrs(static, ext string) (map[string]string, error) {
	var root map[string]any
	var err error
	if ext == "toml" {
		_, err = toml.Decode(static, &root)
	} else {
		err = yaml.Unmarshal([]byte(static), &root)
	}
	if err != nil {
		return nil, err
	}
	eps := map[string]string{}
	for name, v := range lookup(root, "entrypoints") {
		m, _ := v.(map[string]any)
		addr, _ := lookupAny(m, "address").(string)
		addr, proto, _ := strings.Cut(addr, "/")
		if strings.EqualFold(proto, "udp") {
			continue // not dialable over TCP; tests know their UDP addresses
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("entrypoint %s: address %q: %w", name, addr, err)
		}
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1"
		}
		eps[name] = net.JoinHostPort(host, port)
	}
	return eps, nil
}

func lookupAny(m map[string]any, key string) any {
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return nil
}

func lookup(m map[string]any, key string) map[string]any {
	v, _ := lookupAny(m, key).(map[string]any)
	return v
}
