package tcpmux

import (
	"net/netip"
	"testing"
)

func TestMatchers(t *testing.T) {
	ip := netip.MustParseAddr("10.1.2.3")
	tests := []struct {
		rule string
		cd   ConnData
		want bool
	}{
		{"HostSNI(`*`)", ConnData{}, true},
		{"HostSNI(`db.example.com`)", ConnData{ServerName: "db.example.com"}, true},
		{"HostSNI(`DB.example.com.`)", ConnData{ServerName: "db.example.com"}, true},
		{"HostSNI(`db.example.com`)", ConnData{ServerName: "pg.example.com"}, false},
		{"HostSNI(`db.example.com`)", ConnData{}, false},
		{"HostSNI(`*.example.com`)", ConnData{ServerName: "db.example.com"}, true},
		{"HostSNI(`*.example.com`)", ConnData{ServerName: "a.db.example.com"}, false},
		{"HostSNIRegexp(`^[a-z]+\\.example\\.com$`)", ConnData{ServerName: "db.example.com"}, true},
		{"HostSNIRegexp(`^[a-z]+\\.example\\.com$`)", ConnData{ServerName: "d1.example.com"}, false},
		{"ClientIP(`10.0.0.0/8`)", ConnData{ClientIP: ip}, true},
		{"ClientIP(`10.1.2.3`)", ConnData{ClientIP: ip}, true},
		{"ClientIP(`192.168.0.0/16`)", ConnData{ClientIP: ip}, false},
		{"ClientIP(`::ffff:10.0.0.0/104`)", ConnData{ClientIP: ip}, true},
		{"ALPN(`mqtt`)", ConnData{ALPN: []string{"h2", "mqtt"}}, true},
		{"ALPN(`mqtt`)", ConnData{ALPN: []string{"h2"}}, false},
		{"HostSNI(`a.test`) && ALPN(`x`)", ConnData{ServerName: "a.test", ALPN: []string{"x"}}, true},
		{"HostSNI(`a.test`) && ALPN(`x`)", ConnData{ServerName: "a.test"}, false},
		{"HostSNI(`a.test`) || ClientIP(`10.0.0.0/8`)", ConnData{ClientIP: ip}, true},
		{"!ClientIP(`10.0.0.0/8`)", ConnData{ClientIP: ip}, false},
		{"HostSNI(`*`) && !(ALPN(`h2`) || ALPN(`http/1.1`))", ConnData{ALPN: []string{"h2"}}, false},
	}
	for _, tc := range tests {
		m, _, err := Compile(tc.rule)
		if err != nil {
			t.Errorf("%s: %v", tc.rule, err)
			continue
		}
		if got := m(&tc.cd); got != tc.want {
			t.Errorf("%s on %+v: got %v, want %v", tc.rule, tc.cd, got, tc.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for _, r := range []string{
		"HostSNI(`a`, `b`)", "HostSNI()", "Host(`a`)", "HostSNI(`a b`)", "ClientIP(`nope`)",
		"ALPN(`acme-tls/1`)", "HostSNIRegexp(`(`)", "HostSNI(`a`) &&",
	} {
		if _, _, err := Compile(r); err == nil {
			t.Errorf("%s: compiled, want an error", r)
		}
	}
}

func TestPriority(t *testing.T) {
	_, ca, _ := Compile("HostSNI(`*`)")
	_, notCA, _ := Compile("HostSNI(`*`) && ClientIP(`10.0.0.0/8`)")
	if !ca || notCA {
		t.Fatalf("catchAll: %v %v", ca, notCA)
	}
	if Priority("HostSNI(`*`)", true) != -1 || Priority("HostSNI(`a.test`)", false) != len("HostSNI(`a.test`)") {
		t.Error("priorities")
	}
}

type named string

func (named) ServeTCP(*Conn) {}

func route(t *testing.T, name, rule string) *Route {
	t.Helper()
	m, ca, err := Compile(rule)
	if err != nil {
		t.Fatal(err)
	}
	return &Route{Name: name, Priority: Priority(rule, ca), CatchAll: ca, Match: m, Handler: named(name)}
}

// TestRoutePrecedence follows traefik pkg/server/router/tcp/router.go
// ServeTCP: an HTTPS router for the SNI first (exact or wildcard), then a
// specific TLS route, then HTTPS routers without a Host (their
// catch-all), then HostSNI(`*`), which takes every unknown or missing SNI
// when all HTTPS routers name hosts (case 045).
func TestRoutePrecedence(t *testing.T) {
	pass := route(t, "pass", "HostSNI(`pass.test`)")
	both := route(t, "both", "HostSNI(`web.test`)")
	star := route(t, "star", "HostSNI(`*`)")
	plain := route(t, "plain", "HostSNI(`*`)")
	ep := &EntryPoint{
		Plain: NewMux([]*Route{plain}), TLS: NewMux([]*Route{star, pass, both}),
		HTTPS: true, HTTPSCatchAll: true, HTTPSHosts: map[string]bool{"web.test": true, "*.wild.test": true},
	}
	tests := []struct {
		name  string
		sni   string
		tls   bool
		want  Decision
		route string
	}{
		{"specific tcp route", "pass.test", true, ToTCP, "pass"},
		{"https router for the exact host beats a tcp route", "web.test", true, ToHTTP, ""},
		{"https router for a wildcard host beats a tcp route", "x.wild.test", true, ToHTTP, ""},
		{"https catch-all beats HostSNI(*)", "other.test", true, ToHTTP, ""},
		{"plain connection", "", false, ToTCP, "plain"},
	}
	if d, _ := ep.Route(&ConnData{ServerName: "pass.test", ALPN: []string{"acme-tls/1"}, ACMEChallenge: true}, true); d != ToHTTP {
		t.Errorf("an ACME TLS-ALPN-01 challenge Gantry answers must reach the HTTPS server, got %v", d)
	}
	if d, r := ep.Route(&ConnData{ServerName: "pass.test", ALPN: []string{"acme-tls/1"}}, true); d != ToTCP || r.Name != "pass" {
		t.Errorf("an acme-tls/1 hello Gantry does not answer must reach the passthrough router, got %v %v", d, r)
	}
	for _, tc := range tests {
		d, r := ep.Route(&ConnData{ServerName: tc.sni}, tc.tls)
		if d != tc.want || (r == nil) != (tc.route == "") || (r != nil && r.Name != tc.route) {
			t.Errorf("%s: got %v %v, want %v %q", tc.name, d, r, tc.want, tc.route)
		}
	}
	ep.HTTPSCatchAll = false
	for _, sni := range []string{"other.test", "", "y.x.wild.test"} {
		if d, r := ep.Route(&ConnData{ServerName: sni}, true); d != ToTCP || r.Name != "star" {
			t.Errorf("HTTPS routers all with a Host: HostSNI(*) takes SNI %q: %v %v", sni, d, r)
		}
	}
	ep.HTTPS, ep.HTTPSHosts = false, nil
	if d, r := ep.Route(&ConnData{ServerName: "other.test"}, true); d != ToTCP || r.Name != "star" {
		t.Errorf("without HTTPS routers HostSNI(*) takes TLS: %v %v", d, r)
	}
	// Server-first: only plain routes and no TLS/HTTPS: routed before any byte.
	if ep.ServeFirst(&ConnData{}) != nil {
		t.Error("ServeFirst with TLS routes present")
	}
	only := &EntryPoint{Plain: NewMux([]*Route{plain})}
	if r := only.ServeFirst(&ConnData{}); r == nil || r.Name != "plain" {
		t.Errorf("ServeFirst: %v", r)
	}
}

func TestMuxOrder(t *testing.T) {
	long := route(t, "long", "HostSNI(`a.test`) || HostSNI(`b.test`)")
	short := route(t, "short", "HostSNI(`a.test`)")
	star := route(t, "star", "HostSNI(`*`)")
	m := NewMux([]*Route{star, short, long})
	if r := m.Match(&ConnData{ServerName: "a.test"}); r.Name != "long" {
		t.Errorf("longest rule first: got %s", r.Name)
	}
	if r := m.Match(&ConnData{ServerName: "c.test"}); r.Name != "star" {
		t.Errorf("catch-all last: got %s", r.Name)
	}
}
