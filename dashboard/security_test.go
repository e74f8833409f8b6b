package dashboard

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"golang.org/x/crypto/bcrypt"

	"github.com/gantry-proxy/gantry/config/static"
)

func bcryptUser(t *testing.T, user, pass string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(pass), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return user + ":" + string(h)
}

func TestSecurityChecks(t *testing.T) {
	users := []string{bcryptUser(t, "admin", "s3cret-pass")}
	f := newFixture(t, func(o *Options) {
		o.Static.API = &static.API{Users: users, AllowedHosts: []string{"gantry.example.com"}}
	})
	h := f.api.Handler()
	auth := func(r *http.Request) { r.SetBasicAuth("admin", "s3cret-pass") }
	tests := []struct {
		name   string
		method string
		target string
		setup  func(r *http.Request)
		code   int
	}{
		{"no credentials", "GET", "/api/overview", nil, 401},
		{"wrong password", "GET", "/api/overview", func(r *http.Request) { r.SetBasicAuth("admin", "nope") }, 401},
		{"unknown user", "GET", "/api/overview", func(r *http.Request) { r.SetBasicAuth("root", "s3cret-pass") }, 401},
		{"authenticated", "GET", "/api/overview", auth, 200},
		{"allowed host", "GET", "/api/overview", func(r *http.Request) { auth(r); r.Host = "gantry.example.com" }, 200},
		{"host from api@internal router rule", "GET", "/api/overview", func(r *http.Request) { auth(r); r.Host = "admin.example.com:8443" }, 200},
		{"localhost", "GET", "/api/overview", func(r *http.Request) { auth(r); r.Host = "localhost:8080" }, 200},
		{"wrong host", "GET", "/api/overview", func(r *http.Request) { auth(r); r.Host = "evil.example.net" }, 403},
		{"wrong host before auth", "GET", "/api/overview", func(r *http.Request) { r.Host = "evil.example.net" }, 403},
		{"dns rebinding to IP", "GET", "/api/overview", func(r *http.Request) { auth(r); r.Host = "203.0.113.9:8080" }, 403},
		{"cross-site POST", "POST", "/api/simulate", func(r *http.Request) {
			auth(r)
			r.Header.Set("Sec-Fetch-Site", "cross-site")
			r.Header.Set("Origin", "https://evil.example.net")
		}, 403},
		{"cross-origin POST without fetch metadata", "POST", "/api/simulate", func(r *http.Request) {
			auth(r)
			r.Header.Set("Origin", "https://evil.example.net")
		}, 403},
		{"same-origin POST", "POST", "/api/simulate", func(r *http.Request) {
			auth(r)
			r.Header.Set("Sec-Fetch-Site", "same-origin")
			r.Header.Set("Origin", "http://127.0.0.1:8080")
		}, 200},
		{"cross-site GET is harmless", "GET", "/api/version", func(r *http.Request) { auth(r); r.Header.Set("Sec-Fetch-Site", "cross-site") }, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body *strings.Reader
			if tt.method == "POST" {
				body = strings.NewReader(`{"url":"http://example.com/app","entryPoint":"web"}`)
			} else {
				body = strings.NewReader("")
			}
			r := httptest.NewRequest(tt.method, tt.target, body)
			r.Host = "127.0.0.1:8080"
			if tt.setup != nil {
				tt.setup(r)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if rec.Code != tt.code {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.code, rec.Body)
			}
			if tt.code == 401 && !strings.Contains(rec.Header().Get("WWW-Authenticate"), `Basic realm="gantry"`) {
				t.Errorf("401 without a Basic challenge: %q", rec.Header().Get("WWW-Authenticate"))
			}
			if strings.Contains(rec.Body.String(), "s3cret-pass") {
				t.Errorf("response echoes the password")
			}
		})
	}
}

func TestUsersFileAndBadUsers(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "users")
	if err := os.WriteFile(file, []byte(bcryptUser(t, "ops", "pw")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(o *Options) { o.Static.API = &static.API{UsersFile: file} })
	r := httptest.NewRequest("GET", "/api/version", nil)
	r.Host = "localhost"
	r.SetBasicAuth("ops", "pw")
	rec := httptest.NewRecorder()
	f.api.Handler().ServeHTTP(rec, r)
	if rec.Code != 200 {
		t.Errorf("usersFile user: status %d", rec.Code)
	}
	for _, c := range []*static.API{{UsersFile: filepath.Join(dir, "missing")}, {Users: []string{"no-colon"}}} {
		_, err := New(Options{Tables: newFixture(t, nil).api.tables, Static: &static.Configuration{API: c}})
		if err == nil || !strings.Contains(err.Error(), "api.users") {
			t.Errorf("%+v: got %v, want an error naming api.users/api.usersFile", c, err)
		}
	}
}

// Issue 15 (DNS rebinding): api.insecure without api.allowedHosts serves
// only Hosts that can name the listener — loopback names and the IP
// literals it is bound to — not any name that resolves here.
func TestInsecureServesOnlyListenerHosts(t *testing.T) {
	withListen := func(addr string, allowed ...string) http.Handler {
		f := newFixture(t, func(o *Options) {
			o.Static.API = &static.API{Insecure: true, AllowedHosts: allowed}
			o.Static.EntryPoints = map[string]*static.EntryPoint{"traefik": {Address: addr}}
		})
		return f.api.Handler()
	}
	var other string // a non-loopback address of this machine, if any
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() {
				other = net.JoinHostPort(n.IP.String(), "8080")
				break
			}
		}
	}
	tests := []struct {
		listen, host string
		allowed      []string
		code         int
	}{
		{"127.0.0.1:8080", "127.0.0.1:8080", nil, 200},
		{"127.0.0.1:8080", "localhost:8080", nil, 200},
		{"127.0.0.1:8080", "[::1]:8080", nil, 200},
		{"127.0.0.1:8080", "rebind.evil.example:8080", nil, 403},
		{"127.0.0.1:8080", "198.51.100.4:8080", nil, 403},
		{"192.0.2.7:8080", "192.0.2.7:8080", nil, 200},
		{"192.0.2.7:8080", "192.0.2.8:8080", nil, 403},
		{":8080", "rebind.evil.example", nil, 403},
		{":8080", "ops.example.com", []string{"ops.example.com"}, 200},
		{":8080", "198.51.100.4:8080", []string{"ops.example.com"}, 403},
	}
	if other != "" {
		tests = append(tests, struct {
			listen, host string
			allowed      []string
			code         int
		}{":8080", other, nil, 200})
	}
	for _, tt := range tests {
		h := withListen(tt.listen, tt.allowed...)
		for _, target := range []string{"/api/rawdata", "/api/ws"} {
			if rec := do(t, h, "GET", target, nil, "Host", tt.host); (rec.Code == 403) != (tt.code == 403) {
				t.Errorf("listen %s allowedHosts %v: GET %s Host %s: status %d, want %d", tt.listen, tt.allowed, target, tt.host, rec.Code, tt.code)
			}
		}
		if tt.code == 403 {
			if rec := do(t, h, "POST", "/api/simulate", strings.NewReader(`{"url":"http://example.com/","entryPoint":"web"}`), "Host", tt.host); rec.Code != 403 {
				t.Errorf("listen %s: POST /api/simulate Host %s: status %d, want 403", tt.listen, tt.host, rec.Code)
			}
		}
	}
}

// The start-up warning names the exposure when the API listens beyond
// loopback without allowedHosts.
func TestExposureWarning(t *testing.T) {
	for _, tt := range []struct {
		listen  string
		allowed []string
		warn    bool
	}{
		{":8080", nil, true}, {"0.0.0.0:8080", nil, true}, {"192.0.2.7:8080", nil, true},
		{"127.0.0.1:8080", nil, false}, {"[::1]:8080", nil, false}, {"localhost:8080", nil, false},
		{":8080", []string{"ops.example.com"}, false},
	} {
		s, err := newSecurity(&static.API{Insecure: true, AllowedHosts: tt.allowed}, tt.listen, nil)
		if err != nil {
			t.Fatal(err)
		}
		w := s.exposureWarning(tt.listen)
		if (w != "") != tt.warn || tt.warn && !strings.Contains(w, "api.allowedHosts") {
			t.Errorf("listen %s allowedHosts %v: warning %q, want warning=%v", tt.listen, tt.allowed, w, tt.warn)
		}
	}
	// Issue 23: in a container, binding to 127.0.0.1 would make the API
	// unreachable through its published port: the advice is to publish
	// it on the host's loopback.
	saved := containerMarkers
	t.Cleanup(func() { containerMarkers = saved })
	marker := filepath.Join(t.TempDir(), ".dockerenv")
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	containerMarkers = []string{marker}
	s, err := newSecurity(&static.API{Insecure: true}, ":8080", nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := s.exposureWarning(":8080"); strings.Contains(w, "to 127.0.0.1") || !strings.Contains(w, `127.0.0.1:8080:8080`) {
		t.Errorf("in a container: warning %q; want the advice to publish on the host's loopback, not to bind 127.0.0.1", w)
	}
}

// Issue 15: the command line shown by /debug/vars and /debug/pprof/cmdline
// (api.debug) has secret option values redacted, by the API's rules.
func TestDebugCommandLineRedacted(t *testing.T) {
	saved := os.Args
	t.Cleanup(func() { os.Args = saved })
	os.Args = []string{"gantry", "--providers.consul.token=SECRET-flag-token", "--providers.consulCatalog.endpoint.token", "SECRET-spaced-token",
		"--api.users=admin:SECRET-hash,bob:SECRET-hash2", "--providers.consul.endpoints=http://u:SECRET-url-pass@10.0.0.1:8500", "--log.level=DEBUG"}
	f := newFixture(t, func(o *Options) { o.Static.API = &static.API{Debug: true} })
	for _, target := range []string{"/debug/vars", "/debug/pprof/cmdline"} {
		rec := do(t, f.api.Handler(), "GET", target, nil, "Host", "localhost")
		body := rec.Body.String()
		if rec.Code != 200 || strings.Contains(body, "SECRET") {
			t.Errorf("GET %s: %d, leaks a secret:\n%s", target, rec.Code, body)
		}
		for _, want := range []string{"--providers.consul.token=REDACTED", "admin:REDACTED", "--log.level=DEBUG", "http://u:REDACTED@10.0.0.1:8500"} {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s lacks %q:\n%s", target, want, body)
			}
		}
	}
	if rec := do(t, f.api.Handler(), "GET", "/debug/vars", nil, "Host", "localhost"); !json.Valid(rec.Body.Bytes()) || !strings.Contains(rec.Body.String(), `"memstats"`) {
		t.Errorf("/debug/vars is not expvar's JSON: %.300s", rec.Body)
	}
}

func TestWebSocketOriginCheck(t *testing.T) {
	f := newFixture(t, nil)
	srv := httptest.NewServer(f.api.Handler())
	defer srv.Close()
	wsURL := "ws" + strings.TrimPrefix(srv.URL, "http") + "/api/ws"
	tests := []struct {
		name   string
		origin string
		code   int
	}{
		{"foreign origin", "https://evil.example.net", 403},
		{"null origin", "null", 403},
		{"same origin", srv.URL, 101},
		{"no origin (non-browser client)", "", 101},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.origin != "" {
				h.Set("Origin", tt.origin)
			}
			c, resp, err := websocket.DefaultDialer.Dial(wsURL, h)
			if c != nil {
				c.Close()
			}
			if resp == nil {
				t.Fatalf("no response: %v", err)
			}
			if resp.StatusCode != tt.code {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.code)
			}
		})
	}
	f.api.Close()
}

func TestHostsFromAPIRouterRules(t *testing.T) {
	tests := []struct {
		name    string
		rule    string
		host    string
		allowed bool
	}{
		{"literal host", "Host(`ops.example.com`) && PathPrefix(`/`)", "ops.example.com", true},
		{"other host refused", "Host(`ops.example.com`)", "evil.example.net", false},
		{"regexp host", "HostRegexp(`^[a-z]+\\.ops\\.example\\.com$`)", "eu.ops.example.com", true},
		{"regexp mismatch", "HostRegexp(`^[a-z]+\\.ops\\.example\\.com$`)", "ops.example.com.evil.net", false},
		{"or without host opens every host", "Host(`ops.example.com`) || PathPrefix(`/api`)", "evil.example.net", true},
		{"path only opens every host", "PathPrefix(`/api`)", "evil.example.net", true},
		{"negated host is not an allowance", "!Host(`evil.example.net`) && Host(`ops.example.com`)", "evil.example.net", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			m := loadMerged(t, "merged.yml")
			m.Config.HTTP.Routers["dashboard@file"].Rule = tt.rule
			f.tables.swap(merged(t, m.Config))
			code := do(t, f.api.Handler(), "GET", "/api/version", nil, "Host", tt.host).Code
			if got := code == 200; got != tt.allowed {
				t.Errorf("Host %s with rule %s: status %d, want allowed=%v", tt.host, tt.rule, code, tt.allowed)
			}
		})
	}
}

// api.debug serves Go's profiler behind the same checks as the API; off by
// default.
func TestDebugEndpointsOnlyWithAPIDebug(t *testing.T) {
	for _, debug := range []bool{false, true} {
		f := newFixture(t, func(o *Options) { o.Static.API = &static.API{Debug: debug} })
		rec := do(t, f.api.Handler(), "GET", "/debug/pprof/", nil, "Host", "localhost")
		if want := map[bool]int{false: 404, true: 200}[debug]; rec.Code != want {
			t.Errorf("debug=%v: /debug/pprof/ status %d, want %d", debug, rec.Code, want)
		}
		if rec := do(t, f.api.Handler(), "GET", "/debug/pprof/", nil, "Host", "evil.example"); rec.Code != 403 {
			t.Errorf("debug=%v: foreign Host got %d, want 403", debug, rec.Code)
		}
	}
}
