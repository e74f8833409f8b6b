package balance

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestCookieNames(t *testing.T) {
	if got := cookieName("my cookie;x", "s"); got != "my_cookie_x" {
		t.Errorf("sanitised name %q", got)
	}
	if got := cookieName("", "whoami@docker"); len(got) != 6 || got[0] != '_' {
		t.Errorf("derived name %q", got)
	}
	if cookieName("", "a@file") == cookieName("", "b@file") {
		t.Error("two services share a default cookie name")
	}
}

// A sticky cookie naming a server that is down is not honoured: Lookup
// reports no pin, so the balancer picks an available server and re-pins
// the client (Traefik's behaviour); a server back up is honoured again.
func TestStickyIgnoresDownServer(t *testing.T) {
	ts := testTargets(1, 1)
	s := NewSticky("svc@file", http.Cookie{}, ts, []string{"", ""})
	rec := httptest.NewRecorder()
	s.Set(rec, 1)
	ck := rec.Result().Cookies()
	if len(ck) != 1 {
		t.Fatalf("Set wrote %d cookies", len(ck))
	}
	req := httptest.NewRequest("GET", "/", nil)
	req.AddCookie(ck[0])
	if i, _ := s.Lookup(req); i != 1 {
		t.Fatalf("cookie for server 1: Lookup = %d", i)
	}
	ts[1].Passive = &Passive{}
	ts[1].Backend.downUntil.Store(1 << 62)
	if i, _ := s.Lookup(req); i != -1 {
		t.Errorf("server 1 down: Lookup = %d, want -1 (no pin to a down server)", i)
	}
	ts[1].Backend.downUntil.Store(0)
	if i, _ := s.Lookup(req); i != 1 {
		t.Errorf("server 1 back up: Lookup = %d, want 1", i)
	}
}

// A fenced server (a terminating Kubernetes endpoint that still serves)
// gets no new session from any strategy, but a sticky cookie naming it
// still reaches it (Traefik v3's fenced servers); with only fenced
// servers left, a new session has no server.
func TestFencedServerKeepsStickyClientsOnly(t *testing.T) {
	ts := testTargets(1, 1, 1)
	ts[1].Fenced = true
	stats := []*Latency{{}, {}, {}}
	pickers := map[string]Picker{"wrr": NewWRR(ts), "p2c": NewP2C(ts), "hrw": NewHRW(ts), "leasttime": NewLeastTime(ts, stats)}
	for name, p := range pickers {
		for i := range 200 {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = fmt.Sprintf("192.0.2.%d:1234", i%250)
			got, err := p.Pick(r)
			if err != nil || got == 1 {
				t.Fatalf("%s: pick %d = %d, %v: a fenced server took a new session", name, i, got, err)
			}
		}
	}
	s := NewSticky("svc@kubernetes", http.Cookie{}, ts, []string{"", "", ""})
	rec := httptest.NewRecorder()
	s.Set(rec, 1)
	req := httptest.NewRequest("GET", "/", nil)
	req.AddCookie(rec.Result().Cookies()[0])
	if i, _ := s.Lookup(req); i != 1 {
		t.Errorf("cookie pinned to the fenced server: Lookup = %d, want 1", i)
	}
	ts[0].Fenced, ts[2].Fenced = true, true
	for name, p := range pickers {
		if i, err := p.Pick(httptest.NewRequest("GET", "/", nil)); err != ErrNoBackend {
			t.Errorf("%s with every server fenced: pick %d, %v, want ErrNoBackend", name, i, err)
		}
	}
}
