package ingressnginx

import (
	"testing"
)

// Canary precedence (ingress-nginx): header, then cookie, then weight;
// "always" sends to the canary, "never" to the main backend.
func TestCanaryHeaderAndCookie(t *testing.T) {
	res := translate(t, nil, Options{},
		ing("main", "a.test", "/", "app"),
		ing("canary", "a.test", "/", "canary", "canary", "true", "canary-by-header", "X-Canary", "canary-by-cookie", "beta"),
	)
	main, canary := "default-main-rule-0-path-0", "default-main-rule-0-path-0-canary"
	for _, c := range []struct {
		h    []string
		want string
	}{
		{nil, main},
		{[]string{"X-Canary: always"}, canary},
		{[]string{"X-Canary: never"}, "default-main-rule-0-path-0-main"},
		{[]string{"X-Canary: other"}, main},
		{[]string{"Cookie: a=1; beta=always"}, canary},
		{[]string{"Cookie: beta=never"}, "default-main-rule-0-path-0-main"},
		// The header decides before the cookie.
		{[]string{"X-Canary: never", "Cookie: beta=always"}, "default-main-rule-0-path-0-main"},
		{[]string{"X-Canary: always", "Cookie: beta=never"}, canary},
		{[]string{"Cookie: xbeta=always"}, main},
	} {
		if got := routeOf(t, res.Config, "web", "GET", "http://a.test/x", c.h...); got != c.want {
			t.Errorf("%v: router %q, want %q", c.h, got, c.want)
		}
	}
	if got := res.Config.HTTP.Services["default-main-rule-0-path-0-canary"].LoadBalancer.Servers[0].URL; got != "http://10.244.0.2:8080" {
		t.Errorf("canary server %s", got)
	}
	if got := res.Config.HTTP.Routers["default-main-rule-0-path-0-canary-tls"]; got == nil || got.TLS == nil {
		t.Errorf("no TLS canary router: %+v", got)
	}
}

func TestCanaryHeaderValueAndPattern(t *testing.T) {
	res := translate(t, nil, Options{},
		ing("main", "a.test", "/", "app"),
		ing("canary", "a.test", "/", "canary", "canary", "true", "canary-by-header", "X-Region", "canary-by-header-value", "eu-west"),
		ing("main2", "b.test", "/", "app"),
		ing("canary2", "b.test", "/", "canary", "canary", "true", "canary-by-header", "X-Region", "canary-by-header-pattern", "^eu-.*"),
	)
	for _, c := range []struct{ url, h, want string }{
		{"http://a.test/", "X-Region: eu-west", "default-main-rule-0-path-0-canary"},
		{"http://a.test/", "X-Region: always", "default-main-rule-0-path-0"},
		{"http://a.test/", "X-Region: never", "default-main-rule-0-path-0"},
		{"http://b.test/", "X-Region: eu-north", "default-main2-rule-0-path-0-canary"},
		{"http://b.test/", "X-Region: us-east", "default-main2-rule-0-path-0"},
	} {
		if got := routeOf(t, res.Config, "web", "GET", c.url, c.h); got != c.want {
			t.Errorf("%s %s: router %q, want %q", c.url, c.h, got, c.want)
		}
	}
}

func TestCanaryWeight(t *testing.T) {
	res := translate(t, nil, Options{},
		ing("main", "a.test", "/", "app"),
		ing("canary", "a.test", "/", "canary", "canary", "true", "canary-weight", "30", "canary-weight-total", "200"),
	)
	r := res.Config.HTTP.Routers["default-main-rule-0-path-0"]
	w := res.Config.HTTP.Services[r.Service].Weighted
	if w == nil || len(w.Services) != 2 || *w.Services[0].Weight != 170 || *w.Services[1].Weight != 30 || w.Services[1].Name != "default-main-rule-0-path-0-canary" {
		t.Fatalf("service %s: %+v", r.Service, w)
	}
	// A canary without a matching main path is a problem, not a router.
	res = translate(t, nil, Options{}, ing("lonely", "a.test", "/", "canary", "canary", "true", "canary-weight", "50"))
	problemWith(t, res, "default/lonely", "matches no path of a main Ingress")
	if len(res.Config.HTTP.Routers) != 0 {
		t.Errorf("routers %v", keys(res.Config.HTTP.Routers))
	}
	// Bad values are refused by name.
	res = translate(t, nil, Options{}, ing("main", "a.test", "/", "app"), ing("bad", "a.test", "/", "canary", "canary", "true", "canary-weight", "-5"))
	problemWith(t, res, "default/bad annotation nginx.ingress.kubernetes.io/canary-weight", "not a whole number")
}
