package e2e

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// h2specSummary is h2spec's last line: "145 tests, 141 passed, 0 skipped, 4 failed".
var h2specSummary = regexp.MustCompile(`(\d+) tests, (\d+) passed, (\d+) skipped, (\d+) failed`)

// h2spec conformance through the binary (issue 12's targets): h2spec's 145
// cases (RFC 7540 and RFC 7541, strict cases excluded) against one
// entrypoint, over TLS (ALPN h2) and over h2c with prior knowledge, every
// request routed to a whoami backend. At least 141 must pass over TLS and
// 140 on h2c (measured: 142 and 141); the failing cases are logged by
// name. Those left are Go's HTTP/2 server's choices: a connection-specific
// field or "TE: gzip" is answered 400 instead of a stream error, several
// SETTINGS_INITIAL_WINDOW_SIZE values in one frame close the connection,
// and on h2c an invalid preface is an HTTP/1.1 request answered 400.
func TestH2specConformance(t *testing.T) {
	bin := harness.H2specBin(t)
	w := harness.StartWhoami(t, "h2spec")
	dir := t.TempDir()
	cert, key := writeCert(t, dir, "h2spec.test", 1)
	p := startProxy(t, map[string]string{"web": ""}, "", fmt.Sprintf(`
http:
  routers:
    plain: {rule: "PathPrefix(`+"`/`"+`)", service: s, entryPoints: [web]}
    secure: {rule: "PathPrefix(`+"`/`"+`)", service: s, entryPoints: [web], tls: {}}
  services:
    s: {loadBalancer: {servers: [{url: "http://%s"}]}}
tls:
  stores:
    default:
      defaultCertificate: {certFile: %q, keyFile: %q}
`, w, cert, key))
	host, port, err := net.SplitHostPort(p.EntryPoints["web"])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		min  int
	}{
		{"tls", []string{"--tls", "--insecure"}, 141},
		{"h2c", nil, 140},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			args := append([]string{"--host", host, "--port", port, "--timeout", "2"}, tc.args...)
			out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
			m := h2specSummary.FindStringSubmatch(string(out))
			if m == nil {
				t.Fatalf("h2spec %s: no summary line (err %v):\n%s", strings.Join(args, " "), err, out)
			}
			total, _ := strconv.Atoi(m[1])
			passed, _ := strconv.Atoi(m[2])
			_, failures, _ := strings.Cut(string(out), "Failures:")
			if failures != "" {
				t.Logf("h2spec %s failures:%s", tc.name, failures)
			}
			t.Logf("h2spec %s: %s", tc.name, m[0])
			if total != 145 {
				t.Errorf("h2spec ran %d cases, want 145 (another h2spec version?)", total)
			}
			if passed < tc.min {
				t.Errorf("h2spec %s: %d/%d passed, want at least %d", tc.name, passed, total, tc.min)
			}
			// Gantry advertises the RFC's 16 KiB SETTINGS_MAX_FRAME_SIZE
			// (Go's server would take 1 MiB frames): a larger HEADERS
			// frame is a FRAME_SIZE_ERROR.
			if strings.Contains(failures, "exceeds the SETTINGS_MAX_FRAME_SIZE") {
				t.Errorf("h2spec %s: a frame over 16 KiB was accepted (http2/4.2.3)", tc.name)
			}
		})
	}
}
