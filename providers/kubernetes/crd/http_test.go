package crd

import (
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/google/go-cmp/cmp"
)

// Router names are Traefik's, so that references written for Traefik
// (dashboards, other providers' "x@kubernetescrd") keep working. The
// expected value is the name Traefik v3.7 gives this route.
func TestRouterNameIsTraefiks(t *testing.T) {
	got := routerName("default", "test.route", "Host(`foo.com`) && PathPrefix(`/bar`)")
	if want := "default-test-route-6b204d94623b3df4370c"; got != want {
		t.Errorf("routerName = %q, want %q", got, want)
	}
}

func TestIngressRouteHTTP(t *testing.T) {
	snap := translate(t, Options{}, "testdata/core.yaml", "testdata/http.yaml")
	for _, p := range snap.Problems {
		t.Errorf("unexpected problem: %v", p)
	}
	h := snap.Config.HTTP
	r1 := routerName("apps", "whoami", "Host(`whoami.example.com`)")
	r2 := routerName("apps", "whoami", "Host(`whoami.example.com`) && PathPrefix(`/split`)")
	f := false
	wantTLS := &config.RouterTLSConfig{Options: "apps-modern", CertResolver: "le",
		Domains: []config.Domain{{Main: "example.com", SANs: []string{"*.example.com"}}}}
	want := map[string]*config.Router{
		r1: {
			RouterCommon: config.RouterCommon{
				EntryPoints: []string{"websecure"},
				Rule:        "Host(`whoami.example.com`)",
				Priority:    10,
				Middlewares: []string{"apps-strip", "apps-auth"},
				Service:     r1,
			},
			TLS:           wantTLS,
			Observability: &config.RouterObservability{AccessLogs: &f},
		},
		r2: {
			RouterCommon: config.RouterCommon{
				EntryPoints: []string{"websecure"},
				Rule:        "Host(`whoami.example.com`) && PathPrefix(`/split`)",
				Service:     r2,
			},
			TLS: wantTLS,
		},
	}
	if d := cmp.Diff(want, h.Routers); d != "" {
		t.Errorf("routers (-want +got):\n%s", d)
	}
	// The route's single Kubernetes Service is published under the
	// router's name; ready endpoints, then the terminating one that still
	// serves as a fenced server (its sticky sessions only); not-ready ones
	// are left out.
	lb := h.Services[r1].LoadBalancer
	wantLB := &config.ServersLoadBalancer{
		Servers:            []config.Server{{URL: "http://10.244.0.1:8080"}, {URL: "http://10.244.0.2:8080"}, {URL: "http://10.244.0.3:8080", Fenced: true}},
		Strategy:           "p2c",
		PassHostHeader:     &f,
		Sticky:             &config.Sticky{Cookie: &config.Cookie{Name: "sticky", HTTPOnly: true, Secure: true}},
		ResponseForwarding: &config.ResponseForwarding{FlushInterval: config.Duration(1e6)},
		ServersTransport:   "apps-backend",
	}
	if d := cmp.Diff(wantLB, lb); d != "" {
		t.Errorf("load balancer (-want +got):\n%s", d)
	}
	// Two services: a weighted service under the router's name.
	w := h.Services[r2].Weighted
	if w == nil || len(w.Services) != 2 || w.Services[0].Name != "apps-whoami-http" || *w.Services[0].Weight != 3 ||
		w.Services[1].Name != "apps-canary" || *w.Services[1].Weight != 1 {
		t.Errorf("weighted = %+v", w)
	}
	if h.Services["apps-whoami-http"] == nil {
		t.Error("weighted child apps-whoami-http not published")
	}
	// The TLS Secret is a certificate; the TLSStore's default certificate too.
	if n := len(snap.Config.TLS.Certificates); n != 1 || !strings.Contains(snap.Config.TLS.Certificates[0].CertFile, "BEGIN CERTIFICATE") {
		t.Errorf("certificates = %+v", snap.Config.TLS.Certificates)
	}
	if st := snap.Config.TLS.Stores["default"]; st == nil || st.DefaultCertificate == nil || !strings.Contains(st.DefaultCertificate.KeyFile, "PRIVATE KEY") {
		t.Errorf("default store = %+v", st)
	}
	if got := snap.Origins["router "+r1]; got != "IngressRoute apps/whoami" {
		t.Errorf("origin = %q", got)
	}
}

func TestMiddlewares(t *testing.T) {
	snap := translate(t, Options{}, "testdata/core.yaml", "testdata/http.yaml")
	m := snap.Config.HTTP.Middlewares
	if got := m["apps-strip"].StripPrefix.Prefixes; len(got) != 1 || got[0] != "/api" {
		t.Errorf("strip = %v", got)
	}
	auth := m["apps-auth"].BasicAuth
	if auth == nil || len(auth.Users) != 2 || !strings.HasPrefix(auth.Users[1], "bob:") || auth.Realm != "apps" || !auth.RemoveHeader {
		t.Errorf("basicAuth from a users Secret = %+v", auth)
	}
	// A kubernetes.io/basic-auth Secret: one user, password SHA-1 hashed
	// as Traefik does ({SHA} of "s3cret").
	if got := m["apps-single"].BasicAuth.Users; len(got) != 1 || got[0] != "carol:{SHA}/vNB+F2HQ559kaLUZbmHHvZrXpg=" {
		t.Errorf("basicAuth from a basic-auth Secret = %v", got)
	}
	if got := m["apps-digest"].DigestAuth.Users; len(got) != 2 {
		t.Errorf("digestAuth users = %v", got)
	}
	fa := m["apps-fwd"].ForwardAuth
	if fa == nil || !fa.TrustForwardHeader || fa.TLS == nil || !strings.Contains(fa.TLS.CA, "BEGIN CERTIFICATE") ||
		!strings.Contains(fa.TLS.Key, "PRIVATE KEY") {
		t.Errorf("forwardAuth = %+v", fa)
	}
	// errors: the Kubernetes Service is published for the middleware.
	e := m["apps-oops"].Errors
	if e == nil || e.Service != "apps-oops-errorpage-service" || snap.Config.HTTP.Services[e.Service] == nil {
		t.Errorf("errors = %+v", e)
	}
	if got := m["apps-all-in-one"].Chain.Middlewares; len(got) != 2 || got[0] != "apps-strip" || got[1] != "apps-single" {
		t.Errorf("chain = %v", got)
	}
	if rl := m["apps-limit"].RateLimit; rl.Average != 100 || rl.Burst != 50 || rl.Period.D().Minutes() != 1 {
		t.Errorf("rateLimit = %+v", rl)
	}
	// A bare number is seconds, as in Traefik's int-or-string durations.
	if cb := m["apps-cb"].CircuitBreaker; cb.CheckPeriod.D().Seconds() != 10 {
		t.Errorf("circuitBreaker checkPeriod = %v", cb.CheckPeriod)
	}
	if h := m["apps-secure-headers"].Headers; !h.FrameDeny || h.CustomResponseHeaders["X-Served-By"] != "gantry" {
		t.Errorf("headers = %+v", h)
	}
}

func TestTraefikServices(t *testing.T) {
	snap := translate(t, Options{}, "testdata/core.yaml", "testdata/http.yaml")
	s := snap.Config.HTTP.Services
	w := s["apps-canary"].Weighted
	if w == nil || len(w.Services) != 2 || w.Services[1].Name != "apps-whoami-https-admin" || *w.Services[1].Weight != 9 || w.Sticky.Cookie.Name != "lb" {
		t.Fatalf("weighted = %+v", w)
	}
	// Port name https*: https scheme, as Traefik.
	if u := s["apps-whoami-https-admin"].LoadBalancer.Servers[0].URL; u != "https://10.244.0.1:9443" {
		t.Errorf("https-admin server = %q", u)
	}
	m := s["apps-shadow"].Mirroring
	if m == nil || m.Service != "apps-whoami-80" || len(m.Mirrors) != 1 || m.Mirrors[0].Name != "apps-canary" || m.Mirrors[0].Percent != 10 {
		t.Errorf("mirroring = %+v", m)
	}
	f := s["apps-standby"].Failover
	if f == nil || f.Service != "apps-whoami-80" || f.Fallback != "external-api@file" || f.Errors == nil || f.Errors.Status[0] != "502-504" {
		t.Errorf("failover = %+v", f)
	}
}

func TestTLSOptionAndTransport(t *testing.T) {
	snap := translate(t, Options{}, "testdata/core.yaml", "testdata/http.yaml")
	o := snap.Config.TLS.Options["apps-modern"]
	if o == nil || o.MinVersion != "VersionTLS13" || !o.SniStrict || o.ClientAuth.ClientAuthType != "RequireAndVerifyClientCert" ||
		len(o.ClientAuth.CAFiles) != 1 || !strings.Contains(o.ClientAuth.CAFiles[0], "BEGIN CERTIFICATE") {
		t.Errorf("TLS option = %+v", o)
	}
	st := snap.Config.HTTP.ServersTransports["apps-backend"]
	if st == nil || st.ServerName != "whoami.internal" || len(st.RootCAs) != 1 || !strings.Contains(st.RootCAs[0], "YmFja2VuZA==") ||
		len(st.Certificates) != 1 || st.ForwardingTimeouts.DialTimeout.D().Seconds() != 5 || st.ForwardingTimeouts.ResponseHeaderTimeout.D().Seconds() != 42 {
		t.Errorf("serversTransport = %+v", st)
	}
}
