package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

// wait is the polling budget of most conditions: generous, because the
// machine running the tests is shared and busy.
const wait = 30 * time.Second

// proxy is a running gantry with a file provider over dir.
type proxy struct {
	*harness.Gantry
	dyn string // the file provider's directory
}

// startProxy starts gantry with the given entrypoints (name → address;
// an empty address gets a free port), extra static YAML appended verbatim,
// and dynamic as the file provider's only file.
func startProxy(t *testing.T, eps map[string]string, extra, dynamic string) *proxy {
	t.Helper()
	dyn := t.TempDir()
	harness.WriteFile(t, dyn, "dynamic.yml", dynamic)
	var b strings.Builder
	b.WriteString("entryPoints:\n")
	for name, addr := range eps {
		if addr == "" {
			addr = harness.FreeAddr(t)
		}
		fmt.Fprintf(&b, "  %s:\n    address: %q\n", name, addr)
		if x, ok := epExtra[name]; ok {
			b.WriteString(x)
		}
	}
	fmt.Fprintf(&b, "providers:\n  file:\n    directory: %q\nlog:\n  level: DEBUG\n", dyn)
	b.WriteString(extra)
	g := harness.Start(t, b.String())
	// The first configuration can be applied before the file provider
	// has published (the internal provider is quicker): wait for one
	// applied with every provider heard from, whose log line names none
	// it still waits for.
	harness.Try(t, wait, func() error {
		for _, l := range strings.Split(g.Output(), "\n") {
			if strings.Contains(l, "config applied") && !strings.Contains(l, "waiting=") {
				return nil
			}
		}
		return errors.New("no configuration applied with the file provider's routers yet")
	})
	return &proxy{Gantry: g, dyn: dyn}
}

// epExtra holds per-entrypoint static options, indented under the
// entrypoint, for the names tests use.
var epExtra = map[string]string{
	"trusted":   "    forwardedHeaders:\n      trustedIPs: [\"127.0.0.1/32\"]\n",
	"insecure":  "    forwardedHeaders:\n      insecure: true\n",
	"redir":     "    http:\n      redirections:\n        entryPoint:\n          to: websecure\n",
	"h3":        "    http3: {}\n",
	"elsewhere": "    forwardedHeaders:\n      trustedIPs: [\"192.0.2.31/32\"]\n",
	"strict":    "    http:\n      encodedCharacters:\n        allowEncodedSlash: false\n        allowEncodedHash: false\n",
}

// update rewrites the dynamic file and waits until gantry has applied a new
// configuration.
func (p *proxy) update(t *testing.T, dynamic string) {
	t.Helper()
	before := p.CountOutput("config applied")
	harness.WriteFile(t, p.dyn, "dynamic.yml", dynamic)
	harness.Try(t, wait, func() error {
		if p.CountOutput("config applied") > before {
			return nil
		}
		return fmt.Errorf("configuration not applied yet")
	})
}

// echo is a parsed whoami answer.
type echo struct {
	name        string
	requestLine string
	header      http.Header
}

// parseEcho reads whoami's text echo: "Name: …", Hostname, IP lines,
// RemoteAddr, the request line, then one header per line.
func parseEcho(body string) echo {
	e := echo{header: http.Header{}}
	sc := bufio.NewScanner(strings.NewReader(body))
	seenRequestLine := false
	for sc.Scan() {
		line := sc.Text()
		if !seenRequestLine {
			if v, ok := strings.CutPrefix(line, "Name: "); ok {
				e.name = v
				continue
			}
			if strings.HasSuffix(line, " HTTP/1.1") || strings.HasSuffix(line, " HTTP/2.0") || strings.HasSuffix(line, " HTTP/1.0") {
				e.requestLine, seenRequestLine = line, true
			}
			continue
		}
		k, v, ok := strings.Cut(line, ": ")
		if ok {
			e.header[k] = append(e.header[k], v) // as written, not canonicalised
		}
	}
	return e
}

// get is harness.Get that fails the test on a transport error.
func get(t *testing.T, url string, opts ...harness.ReqOption) *harness.Response {
	t.Helper()
	r, err := harness.Get(url, opts...)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return r
}
