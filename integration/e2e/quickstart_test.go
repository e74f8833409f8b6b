package e2e

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// The README's first command: scripts/quickstart.sh builds and starts two
// whoami backends and gantry with examples/quickstart, prints a curl line
// that works, and stops everything on SIGTERM (Ctrl-C in a terminal).
func TestQuickstartScript(t *testing.T) {
	root := harness.ModuleRoot(t)
	ports := map[string]string{}
	for _, k := range []string{"WEB_PORT", "API_PORT", "WHOAMI1_PORT", "WHOAMI2_PORT"} {
		_, port, _ := net.SplitHostPort(harness.FreeAddr(t))
		ports[k] = port
	}
	var env []string
	for k, v := range ports {
		env = append(env, k+"="+v)
	}
	p := harness.StartProcess(t, "quickstart.sh", root, "bash", []string{"scripts/quickstart.sh"}, env)
	out := p.WaitOutput(t, 5*time.Minute, "Press Ctrl-C to stop.")
	web := "http://127.0.0.1:" + ports["WEB_PORT"]
	if want := "curl -H 'Host: whoami.localhost' " + web + "/"; !strings.Contains(out, want) {
		t.Fatalf("the script does not print %q:\n%s", want, out)
	}
	// It says it works only when its route answered (it waited at most 30 s).
	if !strings.Contains(out, "Gantry is running. Try:") {
		t.Errorf("the script does not say its route answered:\n%s", out)
	}
	// It says what it is doing while it builds (issue 15: minutes of silence).
	for _, want := range []string{"quickstart: building gantry and whoami (the first build", "quickstart: built in "} {
		if !strings.Contains(out, want) {
			t.Errorf("the script does not print %q:\n%s", want, out)
		}
	}
	seen := map[string]bool{}
	for range 4 {
		r := get(t, web+"/", harness.Host("whoami.localhost"))
		if r.StatusCode != 200 {
			t.Fatalf("the printed curl: got %d %q", r.StatusCode, r.Body)
		}
		seen[parseEcho(r.Body).name] = true
	}
	if !seen["whoami-1"] || !seen["whoami-2"] {
		t.Errorf("answers came from %v, want both backends", seen)
	}
	r := get(t, web+"/two/hello", harness.Host("whoami.localhost"))
	if e := parseEcho(r.Body); e.name != "whoami-2" || e.requestLine != "GET /hello HTTP/1.1" {
		t.Errorf("/two/hello: got %q %q", e.name, e.requestLine)
	}
	harness.TryGet(t, wait, "http://127.0.0.1:"+ports["API_PORT"]+"/ping", harness.StatusIs(200), harness.BodyContains("OK"))

	if code := p.Stop(t); code != 0 {
		t.Errorf("quickstart.sh exit code after SIGTERM: %d, want 0", code)
	}
	harness.Try(t, wait, func() error {
		for k, port := range ports {
			if c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second); err == nil {
				c.Close()
				return fmt.Errorf("%s %s still accepts connections after the script stopped", k, port)
			}
		}
		return nil
	})
}
