package generation_test

import (
	"crypto/sha1" //nolint:gosec // Traefik's cookie-name derivation
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/dataplane"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// stickyClient sends requests with the cookies it was given, like a
// browser with its own cookie jar, and remembers Set-Cookie.
type stickyClient struct {
	t       *testing.T
	h       *dptest.Harness[*dataplane.Server]
	host    string
	cookies map[string]*http.Cookie
	lastSet []*http.Cookie
}

func (c *stickyClient) get() string {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+c.h.Addr("web")+"/", nil)
	req.Host = c.host
	for _, ck := range c.cookies {
		req.AddCookie(ck)
	}
	resp, err := dptest.Client.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	c.lastSet = resp.Cookies()
	for _, ck := range c.lastSet {
		c.cookies[ck.Name] = ck
	}
	return dptest.EchoHeader(string(body), "Name")
}

func newStickyClient(t *testing.T, h *dptest.Harness[*dataplane.Server], host string) *stickyClient {
	return &stickyClient{t: t, h: h, host: host, cookies: map[string]*http.Cookie{}}
}

// Case 033: cookie-less clients are balanced evenly and get a cookie with
// the configured attributes; pinned clients stay; a server that leaves
// (here: weight 0, then removed) has its clients re-picked with a new
// cookie; an unknown value is treated as no cookie.
func TestStickyCase033AcrossWeightZero(t *testing.T) {
	a, b, c := dptest.EchoBackend(t, "a"), dptest.EchoBackend(t, "b"), dptest.EchoBackend(t, "c")
	h := newHarness(t, nil, nil)
	defer dptest.CloseIdle()
	cfg := `
http:
  routers: {app@docker: {rule: "Host(` + "`app.example.com`" + `)", service: app@docker}}
  services:
    app@docker:
      loadBalancer:
        sticky: {cookie: {name: app_lb, secure: true, httpOnly: true, sameSite: lax, maxAge: 3600, path: /shop, domain: example.com}}
        servers: [{url: %q}, {url: %q, weight: %d}, {url: %q}]
`
	h.Apply(fmt.Sprintf(cfg, a.URL, b.URL, 1, c.URL), generation.Options{})
	var clients []*stickyClient
	dist := map[string]int{}
	for range 9 {
		cl := newStickyClient(t, h, "app.example.com")
		dist[cl.get()]++
		ck := cl.cookies["app_lb"]
		if ck == nil || !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.MaxAge != 3600 || ck.Path != "/shop" || ck.Domain != "example.com" || len(ck.Value) != 16 {
			t.Fatalf("cookie %+v, want app_lb with every configured attribute and a 16-digit value", ck)
		}
		clients = append(clients, cl)
	}
	if dist["a"] != 3 || dist["b"] != 3 || dist["c"] != 3 {
		t.Fatalf("first requests %v, want 3 per server", dist)
	}
	pinned := map[*stickyClient]string{}
	for _, cl := range clients {
		first := cl.get()
		pinned[cl] = first
		for range 4 {
			if got := cl.get(); got != first {
				t.Fatalf("pinned client moved from %s to %s", first, got)
			}
			if len(cl.lastSet) != 0 {
				t.Fatalf("pinned request got Set-Cookie %v again", cl.lastSet)
			}
		}
	}
	// b drained: weight 0.
	h.Apply(fmt.Sprintf(cfg, a.URL, b.URL, 0, c.URL), generation.Options{})
	for cl, was := range pinned {
		got := cl.get()
		switch {
		case was == "b" && (got == "b" || len(cl.lastSet) != 1):
			t.Errorf("client of the weight-0 server went to %s with Set-Cookie %v, want a new server and a new cookie", got, cl.lastSet)
		case was != "b" && got != was:
			t.Errorf("client of %s moved to %s when b was drained", was, got)
		}
		pinned[cl] = got
	}
	// The re-picked clients stay on their new server.
	for cl, now := range pinned {
		if got := cl.get(); got != now {
			t.Errorf("re-picked client moved again: %s → %s", now, got)
		}
	}
	// An unknown value: balanced, new cookie, no error.
	cl := newStickyClient(t, h, "app.example.com")
	cl.cookies["app_lb"] = &http.Cookie{Name: "app_lb", Value: "deadbeef"}
	if got := cl.get(); got == "" || got == "b" || len(cl.lastSet) != 1 {
		t.Errorf("unknown cookie: served by %q, Set-Cookie %v", got, cl.lastSet)
	}
}

// The cookie is set whatever the status (the first leg of an NTLM
// handshake is a 401).
func TestStickyCookieOnErrorStatus(t *testing.T) {
	be := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", "NTLM")
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer be.Close()
	h := newHarness(t, nil, nil)
	defer dptest.CloseIdle()
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {sticky: {cookie: {}}, servers: [{url: %q}]}}}
`, be.URL), generation.Options{})
	resp, err := dptest.Client.Get("http://" + h.Addr("web") + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// Traefik's default name for service s@file.
	if resp.StatusCode != 401 || len(resp.Cookies()) != 1 || resp.Cookies()[0].Name != traefikCookieName("s@file") {
		t.Errorf("401: cookies %v, want one named %s", resp.Header["Set-Cookie"], traefikCookieName("s@file"))
	}
}

// Two levels: weighted → loadBalancer, each with its own cookie; a
// weight-0 child is never pinned; legacy Traefik values are rewritten.
func TestStickyTwoLevels(t *testing.T) {
	a1, a2, b1 := dptest.EchoBackend(t, "a1"), dptest.EchoBackend(t, "a2"), dptest.EchoBackend(t, "b1")
	h := newHarness(t, nil, nil)
	defer dptest.CloseIdle()
	cfg := `
http:
  routers: {r@file: {rule: "PathPrefix(` + "`/`" + `)", service: w@file}}
  services:
    w@file: {weighted: {sticky: {cookie: {name: outer}}, services: [{name: a@file, weight: %d}, {name: b@file, weight: 1}]}}
    a@file: {loadBalancer: {sticky: {cookie: {name: inner}}, servers: [{url: %q}, {url: %q}]}}
    b@file: {loadBalancer: {servers: [{url: %q}]}}
`
	h.Apply(fmt.Sprintf(cfg, 1, a1.URL, a2.URL, b1.URL), generation.Options{})
	var cl *stickyClient
	for range 4 { // find a client pinned into a@file
		cl = newStickyClient(t, h, "x")
		if strings.HasPrefix(cl.get(), "a") {
			break
		}
	}
	first := cl.get()
	if cl.cookies["outer"] == nil || cl.cookies["inner"] == nil {
		t.Fatalf("cookies %v, want outer and inner", cl.cookies)
	}
	for range 5 {
		if got := cl.get(); got != first {
			t.Fatalf("two-level sticky moved %s → %s", first, got)
		}
	}
	// A Traefik v2 FNV value for the child is accepted and rewritten.
	legacy := newStickyClient(t, h, "x")
	legacy.cookies["outer"] = &http.Cookie{Name: "outer", Value: traefikFNV("b@file")}
	if got := legacy.get(); got != "b1" || len(legacy.lastSet) == 0 || legacy.cookies["outer"].Value != traefikSHA("b@file") {
		t.Errorf("legacy value: served by %s, cookies %v", got, legacy.lastSet)
	}
	// a@file drained in the weighted service: its client moves to b.
	h.Apply(fmt.Sprintf(cfg, 0, a1.URL, a2.URL, b1.URL), generation.Options{})
	if got := cl.get(); got != "b1" {
		t.Errorf("client of the weight-0 child served by %s, want b1", got)
	}
}

// Traefik's cookie name and values, computed here as Traefik documents
// them (pkg/server/cookie, pkg/server/service/loadbalancer/sticky.go),
// independently of package balance.
func traefikCookieName(service string) string {
	sum := sha1.Sum([]byte("_TRAEFIK_BACKEND_" + service)) //nolint:gosec // Traefik's derivation
	return "_" + hex.EncodeToString(sum[:])[:5]
}

func traefikFNV(s string) string {
	h := fnv.New64()
	_, _ = h.Write([]byte(s))
	return strconv.FormatUint(h.Sum64(), 16)
}

func traefikSHA(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:16]
}

// A fenced server (a Kubernetes endpoint that is terminating but still
// serving) keeps the clients its cookie pins, gets no new client, and its
// clients move with a new cookie once it is gone (Traefik v3's fenced
// servers).
func TestStickyFencedServer(t *testing.T) {
	a, b, c := dptest.EchoBackend(t, "a"), dptest.EchoBackend(t, "b"), dptest.EchoBackend(t, "c")
	h := newHarness(t, nil, nil)
	defer dptest.CloseIdle()
	cfg := `
http:
  routers: {app@kubernetes: {rule: "Host(` + "`app.example.com`" + `)", service: app@kubernetes}}
  services:
    app@kubernetes:
      loadBalancer:
        sticky: {cookie: {name: app_lb}}
        servers: [%s]
`
	h.Apply(fmt.Sprintf(cfg, fmt.Sprintf("{url: %q}, {url: %q}, {url: %q}", a.URL, b.URL, c.URL)), generation.Options{})
	pinned := map[*stickyClient]string{}
	for range 9 {
		cl := newStickyClient(t, h, "app.example.com")
		pinned[cl] = cl.get()
	}
	// b terminating: fenced.
	h.Apply(fmt.Sprintf(cfg, fmt.Sprintf("{url: %q}, {url: %q, fenced: true}, {url: %q}", a.URL, b.URL, c.URL)), generation.Options{})
	onB := 0
	for cl, was := range pinned {
		if was == "b" {
			onB++
		}
		if got := cl.get(); got != was || len(cl.lastSet) != 0 {
			t.Errorf("client of %s went to %s (Set-Cookie %v) once b was fenced, want it kept", was, got, cl.lastSet)
		}
	}
	if onB == 0 {
		t.Fatal("no client was pinned to b")
	}
	for i := range 12 {
		cl := newStickyClient(t, h, "app.example.com")
		if got := cl.get(); got == "b" {
			t.Fatalf("new client %d was sent to the fenced server", i)
		}
	}
	// b gone: its clients get another server and a new cookie.
	h.Apply(fmt.Sprintf(cfg, fmt.Sprintf("{url: %q}, {url: %q}", a.URL, c.URL)), generation.Options{})
	for cl, was := range pinned {
		got := cl.get()
		if was == "b" && (got == "b" || len(cl.lastSet) != 1) {
			t.Errorf("client of the removed server went to %s with Set-Cookie %v", got, cl.lastSet)
		}
	}
}
