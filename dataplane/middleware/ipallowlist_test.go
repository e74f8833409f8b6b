package middleware

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
)

func TestIPAllowList(t *testing.T) {
	res := resolverFrom(t, `
http:
  middlewares:
    local:   {ipAllowList: {sourceRange: ["127.0.0.1/32"]}}
    other:   {ipAllowList: {sourceRange: ["192.0.2.0/24"], rejectStatusCode: 404}}
    depth:   {ipAllowList: {sourceRange: ["198.51.100.7"], ipStrategy: {depth: 2}}}
    exclude: {ipAllowList: {sourceRange: ["203.0.113.0/24"], ipStrategy: {excludedIPs: ["10.0.0.0/8", "192.0.2.1"]}}}
    legacy:  {ipWhiteList: {sourceRange: ["127.0.0.1"]}}
    v6:      {ipAllowList: {sourceRange: ["2001:db8::/64"], ipStrategy: {depth: 1, ipv6Subnet: 64}}}
`)
	be := echoBackend(t).URL
	tests := []struct {
		mw   string
		xff  string
		code int
	}{
		{"local", "", 200},
		{"legacy", "", 200},
		{"other", "", 404},
		{"depth", "1.1.1.1, 198.51.100.7, 10.0.0.1", 200},
		{"depth", "198.51.100.7, 10.0.0.1, 10.0.0.2", 403},
		{"depth", "10.0.0.1", 403}, // fewer entries than depth: no client IP
		{"exclude", "203.0.113.9, 10.1.2.3, 192.0.2.1", 200},
		{"exclude", "203.0.113.9, 198.51.100.1, 10.1.2.3", 403},
		{"v6", "2001:db8::1234", 200},
		{"v6", "2001:db9::1", 403},
	}
	for _, tt := range tests {
		srv := front(t, res, be, tt.mw)
		resp, body := do(t, http.MethodGet, srv.URL+"/", nil, func(r *http.Request) {
			if tt.xff != "" {
				r.Header.Set("X-Forwarded-For", tt.xff)
			}
		})
		if resp.StatusCode != tt.code {
			t.Errorf("%s xff=%q: status %d, want %d", tt.mw, tt.xff, resp.StatusCode, tt.code)
		}
		if tt.code == 200 && !strings.Contains(body, `"Method":"GET"`) {
			t.Errorf("%s: backend not reached: %s", tt.mw, body)
		}
	}
}

func TestIPStrategyUnit(t *testing.T) {
	bits := 48
	s, err := newIPStrategy(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "[::ffff:10.1.1.1]:99"
	if got := s.clientIP(r).String(); got != "10.1.1.1" {
		t.Errorf("remote mapped v4: %s", got)
	}
	s6, _ := newIPStrategyFromSubnet(bits)
	r.RemoteAddr = "[2001:db8:1:2:3::4]:1"
	if got := s6.clientIP(r).String(); got != "2001:db8:1::" {
		t.Errorf("ipv6Subnet 48: %s", got)
	}
	r.Header.Set("X-Forwarded-For", "1.1.1.1")
	r.Header.Add("X-Forwarded-For", "2.2.2.2, 3.3.3.3")
	d, _ := newIPStrategy(&configIPStrategyDepth3, "")
	if got := d.clientIP(r).String(); got != "1.1.1.1" {
		t.Errorf("depth over several header lines: %s", got)
	}
	for _, bad := range []string{
		"{ipAllowList: {sourceRange: [nope]}}",
		"{ipAllowList: {sourceRange: []}}",
		"{ipAllowList: {sourceRange: [10.0.0.0/8], ipStrategy: {excludedIPs: [x]}}}",
		"{ipAllowList: {sourceRange: [10.0.0.0/8], ipStrategy: {ipv6Subnet: 200}}}",
	} {
		if err := buildErr(t, "http:\n  middlewares:\n    m: "+bad+"\n", "m"); err == nil || !strings.HasPrefix(err.Error(), "middleware m: ipAllowList.") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

var configIPStrategyDepth3 = config.IPStrategy{Depth: 3}

func newIPStrategyFromSubnet(bits int) (*ipStrategy, error) {
	return newIPStrategy(&config.IPStrategy{IPv6Subnet: &bits}, "")
}
