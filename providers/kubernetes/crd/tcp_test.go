package crd

import (
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/google/go-cmp/cmp"
)

func TestIngressRouteTCPAndUDP(t *testing.T) {
	snap := translate(t, Options{}, "testdata/core.yaml", "testdata/tcp.yaml")
	for _, p := range snap.Problems {
		t.Errorf("unexpected problem: %v", p)
	}
	tc := snap.Config.TCP
	db := tcpRouterName("apps", "db", "HostSNI(`db.example.com`)")
	want := &config.TCPRouter{
		RouterCommon: config.RouterCommon{
			EntryPoints: []string{"tcp"},
			Rule:        "HostSNI(`db.example.com`)",
			Service:     db,
			Middlewares: []string{"apps-only-lan"},
		},
		TLS: &config.RouterTCPTLSConfig{Passthrough: true},
	}
	if d := cmp.Diff(want, tc.Routers[db]); d != "" {
		t.Errorf("router (-want +got):\n%s", d)
	}
	lb := tc.Services[db].LoadBalancer
	if lb == nil || len(lb.Servers) != 2 || lb.Servers[0].Address != "10.244.0.1:8080" || lb.ProxyProtocol.Version != 2 || lb.ServersTransport != "apps-tcp-tls" {
		t.Errorf("tcp load balancer = %+v", lb)
	}
	// TCP router names keep the object's dots, as Traefik's.
	split := tcpRouterName("apps", "split.tcp", "HostSNI(`*`)")
	if split[:15] != "apps-split.tcp-" {
		t.Errorf("tcp router name %q", split)
	}
	r := tc.Routers[split]
	if r == nil || r.Priority != 5 || r.TLS.Options != "apps-modern" || r.TLS.Passthrough {
		t.Fatalf("split router = %+v", r)
	}
	w := tc.Services[split].Weighted
	if w == nil || len(w.Services) != 2 || w.Services[0].Name != split+"-whoami-80" || *w.Services[0].Weight != 2 {
		t.Fatalf("weighted = %+v", w)
	}
	if d := tc.Services[split+"-whoami-80"].LoadBalancer.TerminationDelay; d == nil || *d != 400 {
		t.Errorf("terminationDelay = %v", d)
	}
	if a := tc.Services[split+"-dns-dns-tcp"].LoadBalancer.Servers[0].Address; a != "10.244.0.53:5353" {
		t.Errorf("named port = %q", a)
	}
	if len(snap.Config.TLS.Certificates) != 1 {
		t.Errorf("the non-passthrough route's Secret is a certificate: %d", len(snap.Config.TLS.Certificates))
	}
	if m := tc.Middlewares["apps-only-lan"]; m == nil || m.IPAllowList.SourceRange[0] != "10.0.0.0/8" {
		t.Errorf("middlewareTCP = %+v", m)
	}
	st := tc.ServersTransports["apps-tcp-tls"]
	if st == nil || st.DialTimeout.D().Seconds() != 3 || st.TerminationDelay.D().Milliseconds() != 200 || st.TLS.ServerName != "db.internal" || len(st.TLS.RootCAs) != 1 {
		t.Errorf("serversTransportTCP = %+v", st)
	}
	u := snap.Config.UDP
	if r := u.Routers["apps-dns-0"]; r == nil || r.Service != "apps-dns-0" || r.EntryPoints[0] != "dns" {
		t.Errorf("udp router = %+v", r)
	}
	if s := u.Services["apps-dns-0"].LoadBalancer; s == nil || s.Servers[0].Address != "10.244.0.53:5353" {
		t.Errorf("udp service = %+v", s)
	}
}

// An IngressRouteTCP whose allow-list MiddlewareTCP cannot be used is not
// published without it (that would open the route to everyone, case
// 062): another namespace's middleware is refused unless
// allowCrossNamespace, a missing one disables the router once it
// compiles, and each is a problem naming the route.
func TestTCPMiddlewareReferencesFailClosed(t *testing.T) {
	b := tcpRouterName("team-b", "borrower", "HostSNI(`b.example.com`)")
	typo := tcpRouterName("apps", "typo", "HostSNI(`t.example.com`)")
	snap := translate(t, Options{}, "testdata/core.yaml", "testdata/tcp.yaml", "testdata/tcprefs.yaml")
	if r := snap.Config.TCP.Routers[b]; r != nil {
		t.Errorf("router with a refused cross-namespace allow-list published: %+v", r)
	}
	wantProblem(t, snap, "IngressRouteTCP team-b/borrower", "allowCrossNamespace")
	if r := snap.Config.TCP.Routers[typo]; r != nil && (len(r.Middlewares) != 1 || r.Middlewares[0] != "apps-only-lann") {
		t.Errorf("router naming a missing middleware lost the reference: %+v", r)
	}
	if _, ok := snap.Config.TCP.Middlewares["apps-only-lann"]; ok {
		t.Error("a middleware that does not exist was published")
	}

	snap = translate(t, Options{AllowCrossNamespace: true}, "testdata/core.yaml", "testdata/tcp.yaml", "testdata/tcprefs.yaml")
	if r := snap.Config.TCP.Routers[b]; r == nil || len(r.Middlewares) != 1 || r.Middlewares[0] != "apps-only-lan" {
		t.Errorf("allowed cross-namespace allow-list: %+v", r)
	}
}
