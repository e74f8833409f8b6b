package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// clfLine is Traefik's common log format, field by field
// (pkg/middlewares/accesslog/logger_formatters.go).
var clfLine = regexp.MustCompile(`^(\S+) - (\S+) \[(\d{2}/\w{3}/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4})\] "(\S+) (\S+) (\S+)" (\d{3}) (\d+) "([^"]*)" "([^"]*)" (\d+) "([^"]*)" "([^"]*)" (\d+)ms$`)

func accessLogGantry(t *testing.T, format, extra string) (g *harness.Gantry, logPath, admin string) {
	t.Helper()
	dir := t.TempDir()
	backend := harness.StartWhoami(t, "logged")
	harness.WriteFile(t, dir, "dynamic.yml", fmt.Sprintf(`http:
  routers:
    app:
      entryPoints: [web]
      rule: Host(`+"`app.example`"+`)
      service: app
  services:
    app:
      loadBalancer:
        servers:
          - url: "http://%s"
`, backend))
	logPath = filepath.Join(t.TempDir(), "access.log")
	static := fmt.Sprintf(`entryPoints:
  web:
    address: "%s"
  traefik:
    address: "%s"
api:
  insecure: true
metrics:
  prometheus: {}
accessLog:
  filePath: %q
  format: %s
%s
providers:
  providersThrottleDuration: 50ms
  file:
    directory: "%s"
`, harness.FreeAddr(t), harness.FreeAddr(t), logPath, format, extra, dir)
	g = harness.Start(t, static)
	admin = g.URL(t, "traefik", "")
	harness.TryGet(t, 60*time.Second, admin+"/api/http/routers", harness.StatusIs(200), harness.BodyContains(`"name":"app@file"`))
	return g, logPath, admin
}

func readLines(t *testing.T, paths ...string) []string {
	t.Helper()
	var out []string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			if l != "" {
				out = append(out, l)
			}
		}
	}
	return out
}

// TestAccessLogCommonThroughGantry: a scripted mix written in Traefik's
// common format, each line parsed field by field: a 200 with its router
// and server URL, a 404 without router ("-"), headers dropped by default
// (Referer and User-Agent print "-"), a client that leaves before the
// backend answers logged as 499, and API calls and /metrics scrapes not
// logged (addInternals defaults to false).
func TestAccessLogCommonThroughGantry(t *testing.T) {
	g, logPath, admin := accessLogGantry(t, "common", "")
	harness.TryGet(t, 60*time.Second, g.URL(t, "web", "/ok?x=1"), harness.Host("app.example"), harness.Header("User-Agent", "probe/1"), harness.StatusIs(200))
	harness.TryGet(t, 60*time.Second, g.URL(t, "web", "/nope"), harness.Host("nobody.example"), harness.StatusIs(404))
	for range 3 {
		harness.TryGet(t, 60*time.Second, admin+"/metrics", harness.StatusIs(200))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	req, _ := http.NewRequestWithContext(ctx, "GET", g.URL(t, "web", "/slow?wait=3s"), nil)
	req.Host = "app.example"
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("the slow request answered before the client left")
	}
	cancel()

	var lines []string
	// Each line is written after its response (and the log is flushed
	// about once a second): wait for the three.
	harness.Try(t, 60*time.Second, func() error {
		lines = readLines(t, logPath)
		all := strings.Join(lines, "\n")
		for _, p := range []string{" /ok?x=1 ", " /nope ", " /slow?wait=3s "} {
			if !strings.Contains(all, p) {
				return fmt.Errorf("no line for %s yet: %q", p, lines)
			}
		}
		return nil
	})
	byPath := map[string][]string{}
	for _, l := range lines {
		m := clfLine.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("not Traefik's common format: %q", l)
			continue
		}
		byPath[m[5]] = m
	}
	ok := byPath["/ok?x=1"]
	if ok == nil {
		t.Fatalf("no line for /ok?x=1 in %q", lines)
	}
	for i, want := range map[int]string{1: "127.0.0.1", 2: "-", 4: "GET", 6: "HTTP/1.1", 7: "200", 9: "-", 10: "-", 12: "app@file"} {
		if ok[i] != want {
			t.Errorf("200 line field %d = %q, want %q (line %q)", i, ok[i], want, ok[0])
		}
	}
	if !strings.HasPrefix(ok[13], "http://127.0.0.1:") {
		t.Errorf("ServiceURL %q, want the server's URL", ok[13])
	}
	if nf := byPath["/nope"]; nf == nil || nf[7] != "404" || nf[12] != "-" || nf[13] != "-" {
		t.Errorf("404 line %v, want status 404 and router/service \"-\"", nf)
	}
	if sl := byPath["/slow?wait=3s"]; sl == nil || sl[7] != "499" {
		t.Errorf("client that left: line %v, want status 499", sl)
	}
	for _, l := range lines {
		// Before the API's router exists, the harness's first polls get a
		// 404 from no router (logged, as in Traefik); served by
		// api@internal or prometheus@internal, they must not be.
		if m := clfLine.FindStringSubmatch(l); m != nil && (strings.HasPrefix(m[5], "/metrics") || strings.HasPrefix(m[5], "/api/")) && m[7] != "404" {
			t.Errorf("an internal request is logged: %q", l)
		}
	}
}

// TestAccessLogJSONAndRotation: JSON lines carry Traefik's field names and
// kept headers; renaming the file and sending SIGUSR1 (logrotate) loses no
// line and writes none twice while requests keep flowing.
func TestAccessLogJSONAndRotation(t *testing.T) {
	g, logPath, _ := accessLogGantry(t, "json", `  fields:
    headers:
      names:
        User-Agent: keep
        Authorization: redact`)
	url := g.URL(t, "web", "/")
	send := func(i int) {
		req, _ := http.NewRequest("GET", fmt.Sprintf("%sn%d", url, i), nil)
		req.Host = "app.example"
		req.Header.Set("User-Agent", "rotator/1")
		req.Header.Set("Authorization", "Bearer s3cret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("request %d: %d", i, resp.StatusCode)
		}
	}
	harness.TryGet(t, 60*time.Second, url, harness.Host("app.example"), harness.StatusIs(200))
	const n = 300
	for i := range n {
		send(i)
		if i%60 == 30 {
			rotated := fmt.Sprintf("%s.%d", logPath, i)
			if err := os.Rename(logPath, rotated); err != nil {
				t.Fatal(err)
			}
			if err := g.Signal(syscall.SIGUSR1); err != nil {
				t.Fatal(err)
			}
			harness.Try(t, 30*time.Second, func() error { // gantry reopened: the path exists again
				_, err := os.Stat(logPath)
				return err
			})
		}
	}
	files, _ := filepath.Glob(logPath + "*")
	if len(files) != 6 {
		t.Errorf("%d log files, want 6 (5 rotated and the current): %v", len(files), files)
	}
	seen := map[string]int{}
	var sample map[string]any
	harness.Try(t, 60*time.Second, func() error {
		seen = map[string]int{}
		for _, l := range readLines(t, files...) {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				return harness.Permanent(fmt.Errorf("not JSON: %q", l))
			}
			p, _ := m["RequestPath"].(string)
			seen[p]++
			if p == "/n7" {
				sample = m
			}
		}
		if len(seen) < n {
			return fmt.Errorf("%d distinct lines, want %d", len(seen), n)
		}
		return nil
	})
	for i := range n {
		if c := seen[fmt.Sprintf("/n%d", i)]; c != 1 {
			t.Errorf("request /n%d logged %d times, want once", i, c)
		}
	}
	for _, k := range []string{"ClientAddr", "ClientHost", "ClientPort", "DownstreamStatus", "DownstreamContentSize", "Duration",
		"OriginStatus", "RequestAddr", "RequestHost", "RequestMethod", "RequestPath", "RequestProtocol", "RequestScheme",
		"RequestCount", "RetryAttempts", "RouterName", "ServiceName", "ServiceURL", "ServiceAddr", "StartUTC", "StartLocal",
		"entryPointName", "level", "msg", "time"} {
		if _, ok := sample[k]; !ok {
			t.Errorf("JSON line lacks %s: %v", k, sample)
		}
	}
	if sample["request_User-Agent"] != "rotator/1" || sample["request_Authorization"] != "REDACTED" {
		t.Errorf("headers: User-Agent %v, Authorization %v; want kept and REDACTED", sample["request_User-Agent"], sample["request_Authorization"])
	}
	if sample["RouterName"] != "app@file" || sample["DownstreamStatus"] != float64(200) || sample["entryPointName"] != "web" {
		t.Errorf("sample line %v", sample)
	}
}

// TestAccessLogFlushedOnShutdown: the access log is buffered (written in
// large writes about once a second); the lines of requests answered just
// before SIGTERM are still written before gantry exits, none lost.
func TestAccessLogFlushedOnShutdown(t *testing.T) {
	g, logPath, _ := accessLogGantry(t, "json", "")
	url := g.URL(t, "web", "/")
	harness.TryGet(t, 60*time.Second, url, harness.Host("app.example"), harness.StatusIs(200))
	const n = 40
	for i := range n {
		req, _ := http.NewRequest("GET", fmt.Sprintf("%sdown%d", url, i), nil)
		req.Host = "app.example"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("request %d: %d", i, resp.StatusCode)
		}
	}
	http.DefaultClient.CloseIdleConnections()
	if err := g.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := g.Wait(t, 60*time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM", code)
	}
	seen := map[string]int{}
	for _, l := range readLines(t, logPath) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		p, _ := m["RequestPath"].(string)
		seen[p]++
	}
	for i := range n {
		if c := seen[fmt.Sprintf("/down%d", i)]; c != 1 {
			t.Errorf("request /down%d logged %d times, want once", i, c)
		}
	}
}
