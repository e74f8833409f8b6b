package gateway

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func httpsListener(name, host string, refs ...gwv1.SecretObjectReference) gwv1.Listener {
	l := gwv1.Listener{Name: gwv1.SectionName(name), Port: 443, Protocol: gwv1.HTTPSProtocolType, TLS: &gwv1.ListenerTLSConfig{CertificateRefs: refs}}
	if host != "" {
		l.Hostname = new(gwv1.Hostname(host))
	}
	return l
}

func secret(ns, name string) gwv1.SecretObjectReference {
	r := gwv1.SecretObjectReference{Name: gwv1.ObjectName(name)}
	if ns != "" {
		r.Namespace = new(gwv1.Namespace(ns))
	}
	return r
}

func listenerStatus(t *testing.T, st gwv1.GatewayStatus, name string) gwv1.ListenerStatus {
	t.Helper()
	for _, l := range st.Listeners {
		if string(l.Name) == name {
			return l
		}
	}
	t.Fatalf("no status for listener %s", name)
	return gwv1.ListenerStatus{}
}

func TestHTTPSListenerCertificates(t *testing.T) {
	g := gw(
		httpsListener("ok", "a.example.com", secret("", "tls")),
		httpsListener("missing", "b.example.com", secret("", "nope")),
		httpsListener("crossns", "c.example.com", secret("certs", "shared")),
		httpsListener("none", "d.example.com"),
	)
	in := &Input{
		GatewayClasses: []*gwv1.GatewayClass{class()},
		Gateways:       []*gwv1.Gateway{g},
		HTTPRoutes:     []*gwv1.HTTPRoute{route("default", "app", 1, nil, gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{svcRef("web", 80)}})},
	}
	res := Translate(in, fakeBE(), opts())
	checkConfig(t, res)
	st := gwStatus(t, res)
	wantCond(t, listenerStatus(t, st, "ok").Conditions, "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
	wantCond(t, listenerStatus(t, st, "ok").Conditions, "Programmed", metav1.ConditionTrue, "Programmed")
	wantCond(t, listenerStatus(t, st, "missing").Conditions, "ResolvedRefs", metav1.ConditionFalse, "InvalidCertificateRef")
	wantCond(t, listenerStatus(t, st, "missing").Conditions, "Programmed", metav1.ConditionFalse, "Invalid")
	wantCond(t, listenerStatus(t, st, "crossns").Conditions, "ResolvedRefs", metav1.ConditionFalse, "RefNotPermitted")
	wantCond(t, listenerStatus(t, st, "none").Conditions, "ResolvedRefs", metav1.ConditionFalse, "InvalidCertificateRef")
	wantCond(t, st.Conditions, "Accepted", metav1.ConditionTrue, "ListenersNotValid")
	wantCond(t, st.Conditions, "Programmed", metav1.ConditionTrue, "Programmed")

	if n := len(res.Config.TLS.Certificates); n != 1 || res.Config.TLS.Certificates[0].CertFile != "CERT default/tls" {
		t.Fatalf("certificates %+v, want only default/tls", res.Config.TLS.Certificates)
	}
	// The route attaches to every listener (attachedRoutes), but only the
	// valid one serves it, with TLS.
	if n := listenerStatus(t, st, "missing").AttachedRoutes; n != 1 {
		t.Errorf("attachedRoutes of an invalid listener %d, want 1", n)
	}
	if len(res.Config.HTTP.Routers) != 1 {
		t.Fatalf("routers %v", res.Config.HTTP.Routers)
	}
	for _, r := range res.Config.HTTP.Routers {
		if r.TLS == nil || r.EntryPoints[0] != "websecure" || !strings.HasPrefix(r.Rule, "Host(`a.example.com`)") {
			t.Errorf("router %+v", r)
		}
	}

	// A ReferenceGrant from Gateways in default lets the listener use certs/shared.
	in.ReferenceGrants = []*gwv1.ReferenceGrant{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "certs", Name: "g"},
		Spec: gwv1.ReferenceGrantSpec{
			From: []gwv1.ReferenceGrantFrom{{Group: gwv1.GroupName, Kind: "Gateway", Namespace: "default"}},
			To:   []gwv1.ReferenceGrantTo{{Group: "", Kind: "Secret", Name: new(gwv1.ObjectName("shared"))}},
		},
	}}
	res = Translate(in, fakeBE(), opts())
	checkConfig(t, res)
	wantCond(t, listenerStatus(t, gwStatus(t, res), "crossns").Conditions, "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
	if n := len(res.Config.TLS.Certificates); n != 2 {
		t.Errorf("%d certificates, want 2", n)
	}
}

func TestListenerValidation(t *testing.T) {
	kinds := httpListener("kinds", 8080, "")
	kinds.AllowedRoutes = &gwv1.AllowedRoutes{Kinds: []gwv1.RouteGroupKind{{Kind: "HTTPRoute"}, {Kind: "TCPRoute"}}}
	g := gw(
		httpListener("noport", 9999, ""),
		gwv1.Listener{Name: "sctp", Port: 80, Protocol: "SCTP"},
		kinds,
		httpListener("dup1", 80, "x.example.com"),
		httpListener("dup2", 80, "x.example.com"),
		gwv1.Listener{Name: "tcp80", Port: 80, Protocol: gwv1.TCPProtocolType},
	)
	res := Translate(&Input{GatewayClasses: []*gwv1.GatewayClass{class()}, Gateways: []*gwv1.Gateway{g}}, fakeBE(), Options{EntryPoints: opts().EntryPoints, ExperimentalChannel: true})
	checkConfig(t, res)
	st := gwStatus(t, res)
	wantCond(t, listenerStatus(t, st, "noport").Conditions, "Accepted", metav1.ConditionFalse, "PortUnavailable")
	wantCond(t, listenerStatus(t, st, "sctp").Conditions, "Accepted", metav1.ConditionFalse, "UnsupportedProtocol")
	ks := listenerStatus(t, st, "kinds")
	wantCond(t, ks.Conditions, "ResolvedRefs", metav1.ConditionFalse, "InvalidRouteKinds")
	if len(ks.SupportedKinds) != 1 || ks.SupportedKinds[0].Kind != "HTTPRoute" {
		t.Errorf("supportedKinds %+v, want HTTPRoute only", ks.SupportedKinds)
	}
	wantCond(t, listenerStatus(t, st, "dup1").Conditions, "Conflicted", metav1.ConditionFalse, "NoConflicts")
	wantCond(t, listenerStatus(t, st, "dup2").Conditions, "Conflicted", metav1.ConditionTrue, "HostnameConflict")
	wantCond(t, listenerStatus(t, st, "tcp80").Conditions, "Conflicted", metav1.ConditionTrue, "ProtocolConflict")
	for _, p := range res.Problems {
		if !strings.HasPrefix(p.Source, "Gateway default/gw listener ") {
			t.Errorf("problem source %q does not name the listener", p.Source)
		}
	}
}

func TestListenerIsolation(t *testing.T) {
	g := gw(httpListener("any", 80, ""), httpListener("wild", 80, "*.example.com"), httpListener("foo", 80, "foo.example.com"))
	mk := func(name, section string) *gwv1.HTTPRoute {
		r := route("default", name, 1, nil, gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{svcRef("web", 80)}})
		r.Spec.ParentRefs[0].SectionName = new(gwv1.SectionName(section))
		return r
	}
	res := Translate(&Input{GatewayClasses: []*gwv1.GatewayClass{class()}, Gateways: []*gwv1.Gateway{g},
		HTTPRoutes: []*gwv1.HTTPRoute{mk("a", "any"), mk("w", "wild"), mk("f", "foo")}}, fakeBE(), opts())
	rules := map[string]string{}
	for name, r := range res.Config.HTTP.Routers {
		rules[strings.Split(name, "-")[2]] = r.Rule
	}
	want := map[string]string{
		"a": "!HostRegexp(`^.+\\.example\\.com$`) && !Host(`foo.example.com`) && PathPrefix(`/`)",
		"w": "HostRegexp(`^.+\\.example\\.com$`) && !Host(`foo.example.com`) && PathPrefix(`/`)",
		"f": "Host(`foo.example.com`) && PathPrefix(`/`)",
	}
	for k, w := range want {
		if rules[k] != w {
			t.Errorf("route %s: rule %q, want %q", k, rules[k], w)
		}
	}
}

func TestL4Routes(t *testing.T) {
	tlsL := gwv1.Listener{Name: "tls", Port: 443, Protocol: gwv1.TLSProtocolType, TLS: &gwv1.ListenerTLSConfig{Mode: new(gwv1.TLSModePassthrough)}}
	g := gw(tlsL, gwv1.Listener{Name: "pg", Port: 5432, Protocol: gwv1.TCPProtocolType}, gwv1.Listener{Name: "dns", Port: 53, Protocol: gwv1.UDPProtocolType})
	ref := func(name string, port int32) []gwv1.BackendRef {
		return []gwv1.BackendRef{{BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(name), Port: new(gwv1.PortNumber(port))}}}
	}
	pr := []gwv1.ParentReference{{Name: "gw"}}
	in := &Input{
		GatewayClasses: []*gwv1.GatewayClass{class()},
		Gateways:       []*gwv1.Gateway{g},
		TLSRoutes: []*gwv1.TLSRoute{{ObjectMeta: meta("default", "t", 1), Spec: gwv1.TLSRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: pr}, Hostnames: []gwv1.Hostname{"db.example.com", "*.example.org"},
			Rules: []gwv1.TLSRouteRule{{BackendRefs: ref("web", 80)}}}}},
		TCPRoutes: []*gwv1.TCPRoute{{ObjectMeta: meta("default", "pg", 1), Spec: gwv1.TCPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "gw", SectionName: new(gwv1.SectionName("pg"))}}}, Rules: []gwv1.TCPRouteRule{{BackendRefs: ref("api", 8080)}}}}},
		UDPRoutes: []*gwv1.UDPRoute{{ObjectMeta: meta("default", "dns", 1), Spec: gwv1.UDPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: pr}, Rules: []gwv1.UDPRouteRule{{BackendRefs: ref("dns", 53)}}}}},
	}
	// Without the experimental channel, TCP and UDP listeners are not supported.
	res := Translate(in, fakeBE(), opts())
	checkConfig(t, res)
	wantCond(t, listenerStatus(t, gwStatus(t, res), "pg").Conditions, "Accepted", metav1.ConditionFalse, "UnsupportedProtocol")
	if res.Config.UDP != nil {
		t.Error("UDP routers without the experimental channel")
	}
	o := opts()
	o.ExperimentalChannel = true
	res = Translate(in, fakeBE(), o)
	checkConfig(t, res)
	tcp := res.Config.TCP
	if tcp == nil || len(tcp.Routers) != 2 {
		t.Fatalf("TCP config %+v", tcp)
	}
	for name, r := range tcp.Routers {
		switch {
		case strings.HasPrefix(name, "tlsroute-"):
			if r.Rule != "HostSNI(`db.example.com`) || HostSNIRegexp(`^.+\\.example\\.org$`)" || r.TLS == nil || !r.TLS.Passthrough || r.EntryPoints[0] != "websecure" {
				t.Errorf("TLS router %+v", r)
			}
		case strings.HasPrefix(name, "tcproute-"):
			if r.Rule != "HostSNI(`*`)" || r.TLS != nil || r.EntryPoints[0] != "tcp" {
				t.Errorf("TCP router %+v", r)
			}
		}
	}
	if u := res.Config.UDP; u == nil || len(u.Routers) != 1 {
		t.Fatalf("UDP config %+v", u)
	}
	wantCond(t, routeStatus(t, res, "UDPRoute", "default", "dns")[0].Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
}

func TestGatewaysShareEntryPoints(t *testing.T) {
	a := gw(httpListener("http", 80, ""))
	b := gw(httpListener("http", 80, ""))
	b.Name = "gw2"
	res := Translate(&Input{GatewayClasses: []*gwv1.GatewayClass{class()}, Gateways: []*gwv1.Gateway{a, b}}, fakeBE(), opts())
	checkConfig(t, res)
	for nn, st := range res.Status.Gateways {
		wantCond(t, st.Listeners[0].Conditions, "Conflicted", metav1.ConditionFalse, "NoConflicts")
		wantCond(t, st.Listeners[0].Conditions, "Programmed", metav1.ConditionTrue, "Programmed")
		if t.Failed() {
			t.Logf("Gateway %s", nn)
		}
	}
}
