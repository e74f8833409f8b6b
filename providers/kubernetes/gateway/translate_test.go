package gateway

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestHTTPRouteBasic(t *testing.T) {
	other := &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: gwv1.GatewayClassSpec{ControllerName: "k8s.io/nginx"}}
	foreign := &gwv1.Gateway{ObjectMeta: meta("default", "foreign", 0), Spec: gwv1.GatewaySpec{GatewayClassName: "nginx", Listeners: []gwv1.Listener{httpListener("http", 80, "")}}}
	r := route("default", "app", 1, []string{"app.example.com"}, gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{prefix("/api/")}, BackendRefs: []gwv1.HTTPBackendRef{svcRef("web", 80)}})
	r.Spec.ParentRefs = append(r.Spec.ParentRefs, parent("foreign"))
	in := &Input{
		GatewayClasses: []*gwv1.GatewayClass{class(), other},
		Gateways:       []*gwv1.Gateway{gw(httpListener("http", 80, "")), foreign},
		HTTPRoutes:     []*gwv1.HTTPRoute{r},
	}
	res := Translate(in, fakeBE(), opts())
	checkConfig(t, res)

	if _, ok := res.Status.GatewayClasses["nginx"]; ok {
		t.Error("a GatewayClass of another controller got a status")
	}
	wantCond(t, res.Status.GatewayClasses["gantry"].Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
	if len(res.Status.Gateways) != 1 {
		t.Errorf("statuses for %d Gateways, want only ours", len(res.Status.Gateways))
	}
	gs := gwStatus(t, res)
	wantCond(t, gs.Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
	wantCond(t, gs.Conditions, "Programmed", metav1.ConditionTrue, "Programmed")
	if ls := gs.Listeners[0]; ls.AttachedRoutes != 1 || len(ls.SupportedKinds) != 2 || len(ls.Conditions) != 4 {
		t.Errorf("listener status %+v", ls)
	}
	sts := routeStatus(t, res, "HTTPRoute", "default", "app")
	if len(sts) != 1 || sts[0].ParentRef.Name != "gw" || sts[0].ControllerName != DefaultControllerName {
		t.Fatalf("route parents %+v: want only our Gateway", sts)
	}
	wantCond(t, sts[0].Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
	wantCond(t, sts[0].Conditions, "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
	if g := condOf(t, sts[0].Conditions, "Accepted").ObservedGeneration; g != 3 {
		t.Errorf("observedGeneration %d, want 3", g)
	}

	if len(res.Config.HTTP.Routers) != 1 {
		t.Fatalf("routers %v", res.Config.HTTP.Routers)
	}
	for _, rt := range res.Config.HTTP.Routers {
		if want := "Host(`app.example.com`) && (Path(`/api`) || PathPrefix(`/api/`))"; rt.Rule != want {
			t.Errorf("rule %q, want %q", rt.Rule, want)
		}
		if !slices.Equal(rt.EntryPoints, []string{"web"}) || rt.TLS != nil {
			t.Errorf("router %+v", rt)
		}
		wrr := res.Config.HTTP.Services[rt.Service].Weighted
		lb := res.Config.HTTP.Services[wrr.Services[0].Name].LoadBalancer
		if len(lb.Servers) != 2 || lb.Servers[0].URL != "http://10.244.0.1:8080" {
			t.Errorf("servers %+v", lb.Servers)
		}
	}
	if len(res.Problems) != 0 {
		t.Errorf("problems %v", res.Problems)
	}
}

// TestPrecedence checks the specification's order: exact path, longest
// prefix, method, most headers, most query params, then the oldest route.
func TestPrecedence(t *testing.T) {
	m := func(ms ...gwv1.HTTPRouteMatch) gwv1.HTTPRouteRule {
		return gwv1.HTTPRouteRule{Matches: ms, BackendRefs: []gwv1.HTTPBackendRef{svcRef("web", 80)}}
	}
	withMethod := prefix("/a")
	withMethod.Method = new(gwv1.HTTPMethodPost)
	oneHeader := prefix("/a")
	oneHeader.Headers = []gwv1.HTTPHeaderMatch{{Name: "X-A", Value: "1"}}
	twoHeaders := prefix("/a")
	twoHeaders.Headers = []gwv1.HTTPHeaderMatch{{Name: "X-A", Value: "1"}, {Name: "X-B", Value: "2"}}
	oneQuery := prefix("/a")
	oneQuery.QueryParams = []gwv1.HTTPQueryParamMatch{{Name: "q", Value: "1"}}
	in := &Input{
		GatewayClasses: []*gwv1.GatewayClass{class()},
		Gateways:       []*gwv1.Gateway{gw(httpListener("http", 80, ""))},
		HTTPRoutes: []*gwv1.HTTPRoute{
			// Created later: loses ties against "old".
			route("default", "new", 9, nil, m(prefix("/")), m(prefix("/a")), m(exact("/a")), m(prefix("/a/b"))),
			route("default", "old", 1, nil, m(prefix("/a")), m(withMethod), m(oneHeader), m(twoHeaders), m(oneQuery)),
			route("default", "host", 5, []string{"*.example.com"}, m(prefix("/"))),
			route("default", "exacthost", 5, []string{"a.example.com"}, m(prefix("/"))),
		},
	}
	res := Translate(in, fakeBE(), opts())
	checkConfig(t, res)
	type rr struct {
		name string
		prio int
	}
	var got []rr
	for name, r := range res.Config.HTTP.Routers {
		got = append(got, rr{name, r.Priority})
	}
	slices.SortFunc(got, func(a, b rr) int { return b.prio - a.prio })
	want := []string{
		"httproute-default-exacthost-r0", // exact hostname first
		"httproute-default-host-r0",      // then a wildcard hostname
		"httproute-default-new-r2",       // Exact /a
		"httproute-default-new-r3",       // PathPrefix /a/b
		"httproute-default-old-r1",       // /a + method
		"httproute-default-old-r3",       // /a + 2 headers
		"httproute-default-old-r2",       // /a + 1 header
		"httproute-default-old-r4",       // /a + 1 query
		"httproute-default-old-r0",       // /a, older route
		"httproute-default-new-r1",       // /a, newer route
		"httproute-default-new-r0",       // /
	}
	if len(got) != len(want) {
		t.Fatalf("%d routers, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i].name, w+"-") {
			t.Errorf("position %d: %s (priority %d), want %s", i, got[i].name, got[i].prio, w)
		}
	}
}

func TestHostnameIntersection(t *testing.T) {
	for _, tc := range []struct {
		listener string
		route    []string
		want     []string
		ok       bool
	}{
		{"", nil, []string{}, true},
		{"", []string{"A.example.com"}, []string{"a.example.com"}, true},
		{"*.example.com", nil, []string{"*.example.com"}, true},
		{"*.example.com", []string{"foo.example.com", "bar.other.com"}, []string{"foo.example.com"}, true},
		{"*.example.com", []string{"a.b.example.com"}, []string{"a.b.example.com"}, true},
		{"*.example.com", []string{"example.com"}, nil, false},
		{"foo.example.com", []string{"*.example.com"}, []string{"foo.example.com"}, true},
		{"*.example.com", []string{"*.foo.example.com"}, []string{"*.foo.example.com"}, true},
		{"*.foo.example.com", []string{"*.example.com"}, []string{"*.foo.example.com"}, true},
		{"foo.example.com", []string{"bar.example.com"}, nil, false},
	} {
		var lh *gwv1.Hostname
		if tc.listener != "" {
			lh = new(gwv1.Hostname(tc.listener))
		}
		var rh []gwv1.Hostname
		for _, h := range tc.route {
			rh = append(rh, gwv1.Hostname(h))
		}
		got, ok := intersect(lh, rh)
		if ok != tc.ok || (ok && !slices.Equal(got, tc.want)) {
			t.Errorf("intersect(%q, %v) = %v, %v; want %v, %v", tc.listener, tc.route, got, ok, tc.want, tc.ok)
		}
	}
}

func TestRouteNotAttached(t *testing.T) {
	l := httpListener("http", 80, "*.example.com")
	in := &Input{
		GatewayClasses: []*gwv1.GatewayClass{class()},
		Gateways:       []*gwv1.Gateway{gw(l)},
		HTTPRoutes: []*gwv1.HTTPRoute{
			route("default", "otherhost", 1, []string{"www.other.org"}, gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{svcRef("web", 80)}}),
			route("apps", "otherns", 1, []string{"a.example.com"}, gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{svcRef("web", 80)}}),
		},
	}
	sec := route("default", "section", 1, nil)
	sec.Spec.ParentRefs[0].SectionName = new(gwv1.SectionName("https"))
	in.HTTPRoutes = append(in.HTTPRoutes, sec)
	res := Translate(in, fakeBE(), opts())
	checkConfig(t, res)
	wantCond(t, routeStatus(t, res, "HTTPRoute", "default", "otherhost")[0].Conditions, "Accepted", metav1.ConditionFalse, "NoMatchingListenerHostname")
	wantCond(t, routeStatus(t, res, "HTTPRoute", "apps", "otherns")[0].Conditions, "Accepted", metav1.ConditionFalse, "NotAllowedByListeners")
	wantCond(t, routeStatus(t, res, "HTTPRoute", "default", "section")[0].Conditions, "Accepted", metav1.ConditionFalse, "NoMatchingParent")
	if n := len(res.Config.HTTP.Routers); n != 0 {
		t.Errorf("%d routers for routes that are not attached", n)
	}
	if n := gwStatus(t, res).Listeners[0].AttachedRoutes; n != 0 {
		t.Errorf("attachedRoutes %d", n)
	}

	// From: Selector admits namespaces by label.
	l.AllowedRoutes = &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{
		From: new(gwv1.NamespacesFromSelector), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}}}
	in.Gateways = []*gwv1.Gateway{gw(l)}
	in.Namespaces = []*corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "apps", Labels: map[string]string{"team": "a"}}}}
	res = Translate(in, fakeBE(), opts())
	checkConfig(t, res)
	wantCond(t, routeStatus(t, res, "HTTPRoute", "apps", "otherns")[0].Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
	// Its backendRef names a Service of its own namespace, which does not exist.
	st := routeStatus(t, res, "HTTPRoute", "apps", "otherns")[0]
	wantCond(t, st.Conditions, "ResolvedRefs", metav1.ConditionFalse, "BackendNotFound")
}

func TestCrossNamespaceBackendNeedsGrant(t *testing.T) {
	ref := svcRef("db", 5432)
	ref.Namespace = new(gwv1.Namespace("other"))
	in := &Input{
		GatewayClasses: []*gwv1.GatewayClass{class()},
		Gateways:       []*gwv1.Gateway{gw(httpListener("http", 80, ""))},
		HTTPRoutes:     []*gwv1.HTTPRoute{route("default", "x", 1, nil, gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{ref, svcRef("web", 80)}})},
	}
	res := Translate(in, fakeBE(), opts())
	checkConfig(t, res)
	st := routeStatus(t, res, "HTTPRoute", "default", "x")[0]
	wantCond(t, st.Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
	wantCond(t, st.Conditions, "ResolvedRefs", metav1.ConditionFalse, "RefNotPermitted")
	wrr := res.Config.HTTP.Services["httproute-default-x-r0-wrr"].Weighted
	if wrr == nil || wrr.Services[0].Status == nil || *wrr.Services[0].Status != 500 || wrr.Services[1].Name == "" {
		t.Fatalf("weighted %+v: want a 500 share for the refused ref and the valid one kept", wrr)
	}
	if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Source, "HTTPRoute default/x spec.rules[0].backendRefs[0]") {
		t.Errorf("problems %v", res.Problems)
	}

	in.ReferenceGrants = []*gwv1.ReferenceGrant{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "g"},
		Spec: gwv1.ReferenceGrantSpec{
			From: []gwv1.ReferenceGrantFrom{{Group: gwv1.GroupName, Kind: "HTTPRoute", Namespace: "default"}},
			To:   []gwv1.ReferenceGrantTo{{Group: "", Kind: "Service"}},
		},
	}}
	res = Translate(in, fakeBE(), opts())
	checkConfig(t, res)
	wantCond(t, routeStatus(t, res, "HTTPRoute", "default", "x")[0].Conditions, "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")

	// A grant for another kind does not count.
	in.ReferenceGrants[0].Spec.From[0].Kind = "GRPCRoute"
	res = Translate(in, fakeBE(), opts())
	checkConfig(t, res)
	wantCond(t, routeStatus(t, res, "HTTPRoute", "default", "x")[0].Conditions, "ResolvedRefs", metav1.ConditionFalse, "RefNotPermitted")
}

func TestBackendErrors(t *testing.T) {
	bad := svcRef("web", 80)
	bad.Kind = new(gwv1.Kind("Bucket"))
	in := &Input{
		GatewayClasses: []*gwv1.GatewayClass{class()},
		Gateways:       []*gwv1.Gateway{gw(httpListener("http", 80, ""))},
		HTTPRoutes: []*gwv1.HTTPRoute{
			route("default", "missing", 1, nil, gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{svcRef("nope", 80)}}),
			route("default", "kind", 1, nil, gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{bad}}),
			route("default", "none", 1, nil, gwv1.HTTPRouteRule{}),
		},
	}
	res := Translate(in, fakeBE(), opts())
	checkConfig(t, res)
	wantCond(t, routeStatus(t, res, "HTTPRoute", "default", "missing")[0].Conditions, "ResolvedRefs", metav1.ConditionFalse, "BackendNotFound")
	wantCond(t, routeStatus(t, res, "HTTPRoute", "default", "kind")[0].Conditions, "ResolvedRefs", metav1.ConditionFalse, "InvalidKind")
	wantCond(t, routeStatus(t, res, "HTTPRoute", "default", "none")[0].Conditions, "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
	for name, r := range res.Config.HTTP.Routers {
		if strings.HasPrefix(name, "httproute-default-none-") && r.Service != "status-500" {
			t.Errorf("a rule without backendRefs uses %q, want status-500", r.Service)
		}
	}
}
