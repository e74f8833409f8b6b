package gateway

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gantry-proxy/gantry/config"
)

func TestFilters(t *testing.T) {
	mirror := svcRef("api", 8080).BackendObjectReference
	weighted := svcRef("api", 8080)
	weighted.Weight = new(int32(3))
	weighted.Filters = []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gwv1.HTTPHeaderFilter{Set: []gwv1.HTTPHeader{{Name: "X-Backend", Value: "api"}}}}}
	rules := []gwv1.HTTPRouteRule{
		{ // 0: redirect to https, prefix replaced
			Matches: []gwv1.HTTPRouteMatch{prefix("/old")},
			Filters: []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gwv1.HTTPRequestRedirectFilter{
				Scheme: new("https"), StatusCode: new(301), Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: new("/new")}}}},
		},
		{ // 1: rewrite, headers, extensionRef, mirror, weighted backends with their own filter, timeouts
			Matches: []gwv1.HTTPRouteMatch{prefix("/app")},
			Filters: []gwv1.HTTPRouteFilter{
				{Type: gwv1.HTTPRouteFilterURLRewrite, URLRewrite: &gwv1.HTTPURLRewriteFilter{Hostname: new(gwv1.PreciseHostname("internal")), Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: new("/")}}},
				{Type: gwv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: &gwv1.HTTPHeaderFilter{Add: []gwv1.HTTPHeader{{Name: "X-A", Value: "1"}}, Remove: []string{"Server"}}},
				{Type: gwv1.HTTPRouteFilterExtensionRef, ExtensionRef: &gwv1.LocalObjectReference{Group: "traefik.io", Kind: "Middleware", Name: "auth"}},
				{Type: gwv1.HTTPRouteFilterRequestMirror, RequestMirror: &gwv1.HTTPRequestMirrorFilter{BackendRef: mirror, Fraction: &gwv1.Fraction{Numerator: 1, Denominator: new(int32(4))}}},
			},
			BackendRefs: []gwv1.HTTPBackendRef{svcRef("web", 80), weighted},
			Timeouts:    &gwv1.HTTPRouteTimeouts{Request: new(gwv1.Duration("10s")), BackendRequest: new(gwv1.Duration("2s"))},
		},
		{ // 2: unknown extensionRef: 500, never skipped
			Matches:     []gwv1.HTTPRouteMatch{prefix("/x")},
			Filters:     []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterExtensionRef, ExtensionRef: &gwv1.LocalObjectReference{Group: "example.com", Kind: "Thing", Name: "t"}}},
			BackendRefs: []gwv1.HTTPBackendRef{svcRef("web", 80)},
		},
	}
	in := &Input{GatewayClasses: []*gwv1.GatewayClass{class()}, Gateways: []*gwv1.Gateway{gw(httpListener("http", 80, ""))},
		HTTPRoutes: []*gwv1.HTTPRoute{route("default", "f", 1, nil, rules...)}}
	res := Translate(in, fakeBE(), opts())
	checkConfig(t, res)
	router := func(ri string) *config.Router {
		for name, r := range res.Config.HTTP.Routers {
			if strings.HasPrefix(name, "httproute-default-f-"+ri+"-") {
				return r
			}
		}
		t.Fatalf("no router for rule %s", ri)
		return nil
	}
	mw := func(name string) *config.Middleware {
		m := res.Config.HTTP.Middlewares[name]
		if m == nil {
			t.Fatalf("no middleware %s", name)
		}
		return m
	}

	r0 := router("r0")
	rr := mw(r0.Middlewares[0]).RequestRedirect
	if rr == nil || rr.Scheme != "https" || rr.Port != 0 || rr.StatusCode != 301 || *rr.PathPrefix != "/new" || rr.PathMatch != "/old" {
		t.Errorf("redirect %+v", rr)
	}
	if r0.Service != "status-500" {
		t.Errorf("a rule without backends serves %q", r0.Service)
	}

	r1 := router("r1")
	if len(r1.Middlewares) != 3 || r1.Middlewares[2] != "default-auth@kubernetescrd" {
		t.Fatalf("middlewares %v", r1.Middlewares)
	}
	if u := mw(r1.Middlewares[0]).URLRewrite; u == nil || u.Hostname != "internal" || *u.PathPrefix != "/" || u.PathMatch != "/app" {
		t.Errorf("urlRewrite %+v", u)
	}
	if h := mw(r1.Middlewares[1]).ResponseHeaderModifier; h == nil || h.Add["X-A"] != "1" || h.Remove[0] != "Server" {
		t.Errorf("responseHeaderModifier %+v", h)
	}
	mir := res.Config.HTTP.Services[r1.Service].Mirroring
	if mir == nil || len(mir.Mirrors) != 1 || mir.Mirrors[0].Percent != 25 {
		t.Fatalf("mirroring %+v", mir)
	}
	wrr := res.Config.HTTP.Services[mir.Service].Weighted
	if len(wrr.Services) != 2 || *wrr.Services[1].Weight != 3 {
		t.Fatalf("weighted %+v", wrr)
	}
	withFilter := res.Config.HTTP.Services[wrr.Services[1].Name]
	if len(withFilter.Middlewares) != 1 || mw(withFilter.Middlewares[0]).RequestHeaderModifier.Set["X-Backend"] != "api" {
		t.Errorf("backendRef filter service %+v", withFilter)
	}
	lb := res.Config.HTTP.Services[withFilter.Weighted.Services[0].Name].LoadBalancer
	st := res.Config.HTTP.ServersTransports[lb.ServersTransport]
	if st == nil || st.ForwardingTimeouts.ResponseHeaderTimeout.Or(0) != 2e9 {
		t.Errorf("timeouts transport %+v", st)
	}

	if r2 := router("r2"); r2.Service != "status-500" {
		t.Errorf("unknown extensionRef serves %q, want status-500", r2.Service)
	}
	found := false
	for _, p := range res.Problems {
		found = found || p.Source == "HTTPRoute default/f spec.rules[2].filters[0]"
	}
	if !found {
		t.Errorf("no problem names the extensionRef: %v", res.Problems)
	}
	wantCond(t, routeStatus(t, res, "HTTPRoute", "default", "f")[0].Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
}

func TestRedirectPortDefaults(t *testing.T) {
	for _, tc := range []struct {
		scheme *string
		port   *gwv1.PortNumber
		want   int
	}{
		{nil, nil, 8080},       // the listener's port
		{new("https"), nil, 0}, // the scheme's well-known port
		{new("https"), new(gwv1.PortNumber(8443)), 8443}, // explicit
	} {
		r := route("default", "r", 1, nil, gwv1.HTTPRouteRule{Filters: []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestRedirect,
			RequestRedirect: &gwv1.HTTPRequestRedirectFilter{Scheme: tc.scheme, Port: tc.port}}}})
		res := Translate(&Input{GatewayClasses: []*gwv1.GatewayClass{class()}, Gateways: []*gwv1.Gateway{gw(httpListener("alt", 8080, ""))}, HTTPRoutes: []*gwv1.HTTPRoute{r}}, fakeBE(), opts())
		checkConfig(t, res)
		for _, m := range res.Config.HTTP.Middlewares {
			if m.RequestRedirect.Port != tc.want {
				t.Errorf("scheme %v port %v: redirect port %d, want %d", tc.scheme, tc.port, m.RequestRedirect.Port, tc.want)
			}
		}
	}
}

// TestCORSFilter: the CORS filter's fields reach the headers middleware
// as the spec reads them: exact origins listed, wildcard origins as
// anchored expressions (so the request's origin is answered), methods,
// allowed and exposed headers, credentials, and maxAge 5 when unset.
func TestCORSFilter(t *testing.T) {
	h := cors(&gwv1.HTTPCORSFilter{
		AllowOrigins:     []gwv1.CORSOrigin{"https://www.foo.com", "https://*.bar.com"},
		AllowMethods:     []gwv1.HTTPMethodWithWildcard{"GET", "OPTIONS"},
		AllowHeaders:     []gwv1.HTTPHeaderName{"x-header-1", "x-header-2"},
		ExposeHeaders:    []gwv1.HTTPHeaderName{"x-header-3", "x-header-4"},
		AllowCredentials: new(true),
		MaxAge:           3600,
	})
	if strings.Join(h.AccessControlAllowOriginList, ",") != "https://www.foo.com" ||
		strings.Join(h.AccessControlAllowOriginListRegex, ",") != `^https://.*\.bar\.com$` ||
		strings.Join(h.AccessControlAllowMethods, ",") != "GET,OPTIONS" ||
		strings.Join(h.AccessControlAllowHeaders, ",") != "x-header-1,x-header-2" ||
		strings.Join(h.AccessControlExposeHeaders, ",") != "x-header-3,x-header-4" ||
		!h.AccessControlAllowCredentials || h.AccessControlMaxAge != 3600 {
		t.Errorf("cors = %+v", h)
	}
	h = cors(&gwv1.HTTPCORSFilter{AllowOrigins: []gwv1.CORSOrigin{"*"}})
	if h.AccessControlMaxAge != 5 || h.AccessControlAllowCredentials || strings.Join(h.AccessControlAllowOriginListRegex, ",") != "^.*$" {
		t.Errorf("cors with defaults = %+v", h)
	}
}
