package crd

import (
	"slices"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/providers"
)

// wantProblem fails unless one error problem of src has a message holding
// every part.
func wantProblem(t *testing.T, snap providers.Snapshot, src string, parts ...string) {
	t.Helper()
	for _, p := range problemsFor(snap, src) {
		ok := p.Severity == providers.SeverityError && p.Provider == ProviderName
		for _, s := range parts {
			ok = ok && strings.Contains(p.Message, s)
		}
		if ok {
			return
		}
	}
	t.Errorf("no error problem for %s holding %q; problems:\n%v", src, parts, snap.Problems)
}

func TestCrossNamespace(t *testing.T) {
	b1 := routerName("team-b", "borrower", "Host(`b.example.com`)")
	b2 := routerName("team-b", "borrower", "Host(`b2.example.com`)")
	b3 := routerName("team-b", "borrower", "Host(`b3.example.com`)")
	b4 := routerName("team-b", "borrower", "Host(`b4.example.com`)")

	snap := translate(t, Options{}, "testdata/core.yaml", "testdata/bad.yaml")
	r := snap.Config.HTTP.Routers
	for _, n := range []string{b1, b2, b3} {
		if r[n] != nil {
			t.Errorf("router %s uses another namespace and was kept", n)
		}
	}
	if r[b4] == nil {
		t.Error("the object's valid route was dropped with its bad ones")
	}
	src := "IngressRoute team-b/borrower"
	wantProblem(t, snap, src, "spec.routes[0].middlewares[0]", "middleware apps/strip", "allowCrossNamespace")
	wantProblem(t, snap, src, "spec.routes[1].services[0]", "service apps/whoami", "allowCrossNamespace")
	wantProblem(t, snap, src, "spec.routes[2].middlewares[0]", "apps-strip@kubernetescrd", "allowCrossNamespace")

	snap = translate(t, Options{AllowCrossNamespace: true}, "testdata/core.yaml", "testdata/bad.yaml")
	r = snap.Config.HTTP.Routers
	if r[b1] == nil || r[b1].Middlewares[0] != "apps-strip" {
		t.Errorf("allowed cross-namespace middleware: %+v", r[b1])
	}
	if r[b2] == nil || snap.Config.HTTP.Services[b2].LoadBalancer.Servers[0].URL != "http://10.244.0.1:8080" {
		t.Errorf("allowed cross-namespace service: %+v", r[b2])
	}
	if r[b3] == nil || r[b3].Middlewares[0] != "apps-strip@kubernetescrd" {
		t.Errorf("allowed full-name reference: %+v", r[b3])
	}
	if len(problemsFor(snap, src)) != 0 {
		t.Errorf("problems with allowCrossNamespace: %v", problemsFor(snap, src))
	}
}

func TestBadObjectsDisableOnlyThemselves(t *testing.T) {
	snap := translate(t, Options{}, "testdata/core.yaml", "testdata/bad.yaml")
	m := snap.Config.HTTP.Middlewares
	if m["apps-strip"] == nil {
		t.Error("a valid Middleware next to bad ones was dropped")
	}
	for _, c := range []struct {
		id, src string
		parts   []string
	}{
		{"apps-no-secret", "Middleware apps/no-secret", []string{"spec.basicAuth.secret", "secret apps/missing not found"}},
		{"apps-plug", "Middleware apps/plug", []string{"spec.plugin", "not supported"}},
		{"apps-redirect-old", "Middleware apps/redirect-old", []string{"spec.headers.sslRedirect"}},
		{"apps-typo", "Middleware apps/typo", []string{"forceSlashh"}},
		{"apps-wrong-type", "Middleware apps/wrong-type", []string{"rateLimit.average"}},
	} {
		if m[c.id] != nil {
			t.Errorf("middleware %s published", c.id)
		}
		wantProblem(t, snap, c.src, c.parts...)
	}
	// A Middleware that decodes but cannot be translated is a problem
	// naming the object it left out (the dashboard links it).
	for _, id := range []string{"no-secret", "plug", "redirect-old"} {
		for _, p := range problemsFor(snap, "Middleware apps/"+id) {
			if !slices.Equal(p.Objects, []string{"middleware apps-" + id}) {
				t.Errorf("Middleware apps/%s: problem objects %q, want [middleware apps-%s]", id, p.Objects, id)
			}
		}
	}
	// A Secret whose value is a path, not PEM, is refused: Gantry would
	// read the path from its own file system.
	if snap.Config.TLS.Stores["apps-stolen-files"] != nil {
		t.Error("store with a non-PEM Secret published")
	}
	wantProblem(t, snap, "TLSStore apps/stolen-files", "spec.defaultCertificate.secretName", "tls.crt/tls.key")
	// A TLSOption whose client CA is missing is left out (routers naming
	// it are then disabled, never served with weaker options).
	if snap.Config.TLS.Options["apps-mtls"] != nil {
		t.Error("TLS option without its client CA published")
	}
	wantProblem(t, snap, "TLSOption apps/mtls", "spec.clientAuth.secretNames[0]", "absent-ca")
	// default in two namespaces: neither.
	if snap.Config.TLS.Options["default"] != nil {
		t.Error("conflicting default TLS options published")
	}
	wantProblem(t, snap, "TLSOption */default", "apps, team-b")
}

func TestServiceOptions(t *testing.T) {
	route := func(host string) string { return routerName("apps", "backends", "Host(`"+host+"`)") }
	src := "IngressRoute apps/backends"

	snap := translate(t, Options{}, "testdata/core.yaml", "testdata/bad.yaml")
	r := snap.Config.HTTP.Routers
	if r[route("empty.example.com")] != nil {
		t.Error("route to a Service without endpoints kept without allowEmptyServices")
	}
	wantProblem(t, snap, src, "spec.routes[0].services[0]", "no ready endpoint", "allowEmptyServices")
	if r[route("ext.example.com")] != nil {
		t.Error("ExternalName service used without allowExternalNameServices")
	}
	wantProblem(t, snap, src, "spec.routes[1].services[0]", "ExternalName", "allowExternalNameServices")
	if u := snap.Config.HTTP.Services[route("native.example.com")].LoadBalancer.Servers; len(u) != 1 || u[0].URL != "http://10.0.0.10:80" {
		t.Errorf("nativeLB servers = %v", u)
	}
	wantProblem(t, snap, src, "spec.routes[3].services[0]", "has no port 81")
	wantProblem(t, snap, src, "spec.routes[4].kind", "only Rule")
	for _, n := range []string{"nginx.example.com", "gantry.example.com"} {
		for name, rt := range r {
			if strings.Contains(rt.Rule, n) {
				t.Errorf("router %s of another ingress class published", name)
			}
		}
	}

	snap = translate(t, Options{AllowEmptyServices: true, AllowExternalNameServices: true}, "testdata/core.yaml", "testdata/bad.yaml")
	s := snap.Config.HTTP.Services
	if lb := s[route("empty.example.com")]; lb == nil || len(lb.LoadBalancer.Servers) != 0 {
		t.Errorf("allowEmptyServices: %+v", lb)
	}
	if lb := s[route("ext.example.com")]; lb == nil || lb.LoadBalancer.Servers[0].URL != "https://api.example.net:443" {
		t.Errorf("allowExternalNameServices: %+v", lb)
	}
	snap = translate(t, Options{NativeLBByDefault: true, IngressClass: "gantry"}, "testdata/core.yaml", "testdata/bad.yaml")
	s = snap.Config.HTTP.Services
	gr := routerName("apps", "gantry-class", "Host(`gantry.example.com`)")
	if snap.Config.HTTP.Routers[gr] == nil {
		t.Error("ingressClass gantry: its IngressRoute not published")
	}
	if lb := s[gr]; lb == nil || lb.LoadBalancer.Servers[0].URL != "http://10.0.0.10:80" {
		t.Errorf("nativeLBByDefault: %+v", lb)
	}
	if snap.Config.HTTP.Routers[route("empty.example.com")] != nil {
		t.Error("ingressClass gantry: an IngressRoute without class was published")
	}
}
