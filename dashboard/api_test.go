package dashboard

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from the current output")

// TestMain checks for leaked goroutines.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// do runs one request through the API's full handler (security included)
// with a loopback Host.
func do(t testing.TB, h http.Handler, method, target string, body io.Reader, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, body)
	r.Host = "127.0.0.1:8080"
	for i := 0; i+1 < len(hdr); i += 2 {
		if strings.EqualFold(hdr[i], "Host") {
			r.Host = hdr[i+1]
			continue
		}
		r.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// golden compares body (re-indented) with testdata/<name>.golden.json.
func golden(t *testing.T, name string, body []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		t.Fatalf("%s: response is not JSON: %v\n%s", name, err, body)
	}
	buf.WriteByte('\n')
	path := filepath.Join("testdata", name+".golden.json")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./dashboard -run %s -update)", err, t.Name())
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("%s differs from %s (run with -update to accept):\n--- got\n%s", name, path, buf.String())
	}
}

func TestGoldenEndpoints(t *testing.T) {
	f := newFixture(t, nil)
	h := f.api.Handler()
	v1, v2 := f.m1.Version, f.m2.Version
	tests := []struct {
		name, target string
		code         int
		nextPage     string
	}{
		{"overview", "/api/overview", 200, ""},
		{"rawdata", "/api/rawdata", 200, ""},
		{"version", "/api/version", 200, ""},
		{"entrypoints", "/api/entrypoints", 200, "1"},
		{"entrypoint-web", "/api/entrypoints/web", 200, ""},
		{"entrypoint-missing", "/api/entrypoints/nope", 404, ""},
		{"routers", "/api/http/routers", 200, "1"},
		{"routers-page2", "/api/http/routers?per_page=2&page=2", 200, "3"},
		{"routers-lastpage", "/api/http/routers?per_page=2&page=3", 200, "1"},
		{"routers-bad-page", "/api/http/routers?per_page=2&page=9", 400, ""},
		{"routers-status-disabled", "/api/http/routers?status=disabled", 200, "1"},
		{"routers-search", "/api/http/routers?search=example.com", 200, "1"},
		{"routers-provider-docker", "/api/http/routers?provider=docker", 200, "1"},
		{"routers-service", "/api/http/routers?serviceName=app@file", 200, "1"},
		{"routers-middleware", "/api/http/routers?middlewareName=auth@file", 200, "1"},
		{"routers-sorted", "/api/http/routers?sortBy=priority&direction=desc", 200, "1"},
		{"router-broken", "/api/http/routers/broken@docker", 200, ""},
		{"router-secure", "/api/http/routers/secure@file", 200, ""},
		{"router-missing", "/api/http/routers/nope@file", 404, ""},
		{"services", "/api/http/services", 200, "1"},
		{"services-warning-filter", "/api/http/services?status=enabled&search=app", 200, "1"},
		{"service-app", "/api/http/services/app@file", 200, ""},
		{"service-whoami", "/api/http/services/whoami@docker", 200, ""},
		{"middlewares", "/api/http/middlewares", 200, "1"},
		{"middlewares-disabled", "/api/http/middlewares?status=disabled", 200, "1"},
		{"middleware-auth", "/api/http/middlewares/auth@file", 200, ""},
		{"middleware-fwd", "/api/http/middlewares/fwd@file", 200, ""},
		{"providers", "/api/providers", 200, ""},
		{"problems", "/api/problems", 200, ""},
		{"revisions", "/api/revisions", 200, ""},
		{"revision", "/api/revisions/" + v1, 200, ""},
		{"revision-missing", "/api/revisions/ffff", 404, ""},
		{"revision-diff", "/api/revisions/" + v1 + "/diff/" + v2, 200, ""},
		{"unknown-endpoint", "/api/nothing", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(t, h, "GET", tt.target, nil)
			if rec.Code != tt.code {
				t.Fatalf("GET %s: status %d, want %d: %s", tt.target, rec.Code, tt.code, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			if got := rec.Header().Get(nextPageHeader); got != tt.nextPage {
				t.Errorf("X-Next-Page %q, want %q", got, tt.nextPage)
			}
			golden(t, tt.name, rec.Body.Bytes())
		})
	}
}

// secrets are the values planted in testdata/merged.yml and the fixture
// that no response may contain.
var secrets = []string{
	"SECRETbcrypthash", "hc-t0ken-SECRET", "pa55w0rd-SECRET", "SECRETKEY", "SECRETTLSKEY",
	"SECRET-client.key", "SECRET-api-key", "PRIVATE KEY", "SECRET-consul-token",
	"SECRET-internal-auth",
}

func TestNoSecretInAnyResponse(t *testing.T) {
	f := newFixture(t, nil)
	h := f.api.Handler()
	targets := []string{
		"/api/overview", "/api/rawdata", "/api/http/routers", "/api/http/services", "/api/http/middlewares",
		"/api/http/middlewares/auth@file", "/api/http/middlewares/fwd@file", "/api/http/middlewares/hdr@file",
		"/api/http/services/app@file", "/api/http/services/whoami@docker", "/api/providers", "/api/problems",
		"/api/revisions", "/api/revisions/" + f.m2.Version, "/api/revisions/" + f.m1.Version + "/diff/" + f.m2.Version,
	}
	for _, target := range targets {
		rec := do(t, h, "GET", target, nil)
		if rec.Code != 200 {
			t.Errorf("GET %s: status %d", target, rec.Code)
		}
		for _, s := range secrets {
			if strings.Contains(rec.Body.String(), s) {
				t.Errorf("GET %s leaks %q:\n%s", target, s, rec.Body)
			}
		}
	}
	// The redacted shapes keep what operators need: user names, URLs
	// without the password, non-secret headers.
	body := do(t, h, "GET", "/api/rawdata", nil).Body.String()
	for _, want := range []string{`"admin:REDACTED"`, `"http://svc:REDACTED@10.0.0.3:80":"UP"`, `"X-Probe":"dashboard"`, `"Authorization":"REDACTED"`} {
		if !strings.Contains(body, want) {
			t.Errorf("rawdata lacks %s", want)
		}
	}
	body = do(t, h, "GET", "/api/revisions/"+f.m2.Version, nil).Body.String()
	for _, want := range []string{`"keyFile":"REDACTED"`, `"key":"REDACTED"`, `"X-Api-Key":"REDACTED"`, `"X-Internal-Auth":"REDACTED"`, `"X-Env":"prod"`} {
		if !strings.Contains(body, want) {
			t.Errorf("revision lacks %s", want)
		}
	}
}

func TestRedactString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://u:p@h:80/x", "http://u:REDACTED@h:80/x"},
		{`dial "consul://agent:tok3n@10.0.0.1:8500": refused`, `dial "consul://agent:REDACTED@10.0.0.1:8500": refused`},
		{"user@example.com", "user@example.com"},
		{"http://h/x?a=b", "http://h/x?a=b"},
		{`Get "http://127.0.0.1:8500/v1/catalog/services?index=7&token=0b5e-77aa": EOF`, `Get "http://127.0.0.1:8500/v1/catalog/services?index=7&token=REDACTED": EOF`},
		{"https://h/cb?access_token=abc&x=1", "https://h/cb?access_token=REDACTED&x=1"},
	}
	for _, tt := range tests {
		if got := RedactString(tt.in); got != tt.want {
			t.Errorf("RedactString(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

var versionRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

func TestServerStatusFollowsHealth(t *testing.T) {
	f := newFixture(t, nil)
	h := f.api.Handler()
	get := func() map[string]string {
		var s struct {
			ServerStatus map[string]string `json:"serverStatus"`
		}
		if err := json.Unmarshal(do(t, h, "GET", "/api/http/services/app@file", nil).Body.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		return s.ServerStatus
	}
	if got := get()["http://10.0.0.2:8080"]; got != "DOWN" {
		t.Fatalf("10.0.0.2 is %q, want DOWN", got)
	}
	f.health.set("http://10.0.0.2:8080", true)
	if got := get()["http://10.0.0.2:8080"]; got != "UP" {
		t.Errorf("after recovery 10.0.0.2 is %q, want UP", got)
	}
	if !versionRE.MatchString(f.m2.Version) {
		t.Errorf("fixture version %q is not a hex SHA-256", f.m2.Version)
	}
}

// TestServerDetailsBounded: a server shared by thousands of services is
// listed in each one's serverDetails with at most 10 of them (the service
// asked about first) and their total, so /api/http/services does not grow
// with the square of the configuration.
func TestServerDetailsBounded(t *testing.T) {
	f := newFixture(t, nil)
	f.health.mu.Lock()
	shared := []string{}
	for i := range 2999 {
		shared = append(shared, fmt.Sprintf("s%04d@file", i))
	}
	f.health.servers[0].Services = append(shared, "app@file")
	f.health.mu.Unlock()
	rec := do(t, f.api.Handler(), "GET", "/api/http/services/app@file", nil)
	var it struct {
		ServerDetails []ServerDetail `json:"serverDetails"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &it); err != nil || rec.Code != 200 {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
	}
	if len(it.ServerDetails) == 0 {
		t.Fatalf("no serverDetails: %s", rec.Body)
	}
	d := it.ServerDetails[0]
	if len(d.Services) != maxSharedServices || d.Services[0] != "app@file" || d.ServicesTotal != 3000 {
		t.Errorf("serverDetails[0] names %d services (first %q), total %d; want %d, app@file first, total 3000",
			len(d.Services), d.Services[0], d.ServicesTotal, maxSharedServices)
	}
}
