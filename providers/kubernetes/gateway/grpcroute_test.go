package gateway

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestGRPCRoute(t *testing.T) {
	ref := gwv1.GRPCBackendRef{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: "grpc", Port: new(gwv1.PortNumber(50051))}}}
	mirror := &gwv1.HTTPRequestMirrorFilter{BackendRef: gwv1.BackendObjectReference{Name: "grpc", Port: new(gwv1.PortNumber(50051))}, Percent: new(int32(10))}
	r := &gwv1.GRPCRoute{ObjectMeta: meta("default", "g", 1)}
	r.Spec.ParentRefs = []gwv1.ParentReference{{Name: "gw"}}
	r.Spec.Hostnames = []gwv1.Hostname{"grpc.example.com"}
	r.Spec.Rules = []gwv1.GRPCRouteRule{
		{Matches: []gwv1.GRPCRouteMatch{{Method: &gwv1.GRPCMethodMatch{Service: new("echo.Echo"), Method: new("Say")}}}, BackendRefs: []gwv1.GRPCBackendRef{ref},
			Filters: []gwv1.GRPCRouteFilter{{Type: gwv1.GRPCRouteFilterRequestMirror, RequestMirror: mirror}}},
		{Matches: []gwv1.GRPCRouteMatch{{Method: &gwv1.GRPCMethodMatch{Service: new("echo.Echo")}}}, BackendRefs: []gwv1.GRPCBackendRef{ref}},
	}
	res := Translate(&Input{GatewayClasses: []*gwv1.GatewayClass{class()}, Gateways: []*gwv1.Gateway{gw(httpListener("http", 80, ""))}, GRPCRoutes: []*gwv1.GRPCRoute{r}}, fakeBE(), opts())
	checkConfig(t, res)
	wantCond(t, routeStatus(t, res, "GRPCRoute", "default", "g")[0].Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
	rules := map[string]string{}
	var exactPrio, prefixPrio int
	for name, rt := range res.Config.HTTP.Routers {
		rules[name[:strings.Index(name, "-gw-")]] = rt.Rule
		if strings.Contains(name, "-r0-") {
			exactPrio = rt.Priority
			if res.Config.HTTP.Services[rt.Service].Mirroring == nil || res.Config.HTTP.Services[rt.Service].Mirroring.Mirrors[0].Percent != 10 {
				t.Errorf("rule 0 service %q is not the 10%% mirroring", rt.Service)
			}
		} else {
			prefixPrio = rt.Priority
		}
	}
	if rules["grpcroute-default-g-r0"] != "Host(`grpc.example.com`) && Path(`/echo.Echo/Say`)" || rules["grpcroute-default-g-r1"] != "Host(`grpc.example.com`) && PathPrefix(`/echo.Echo/`)" {
		t.Errorf("rules %v", rules)
	}
	if exactPrio <= prefixPrio {
		t.Errorf("service+method priority %d not above service-only %d", exactPrio, prefixPrio)
	}
	if lb := res.Config.HTTP.Services["svc-default-grpc-50051-h2c"]; lb == nil || lb.LoadBalancer.Servers[0].URL != "h2c://10.244.0.6:50051" {
		t.Errorf("gRPC backend %+v, want h2c", lb)
	}
}

func TestUnsupportedRuleFieldsAreProblems(t *testing.T) {
	rule := gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{svcRef("web", 80)}, Retry: &gwv1.HTTPRouteRetry{}}
	res := Translate(&Input{GatewayClasses: []*gwv1.GatewayClass{class()}, Gateways: []*gwv1.Gateway{gw(httpListener("http", 80, ""))},
		HTTPRoutes: []*gwv1.HTTPRoute{route("default", "r", 1, nil, rule)}}, fakeBE(), opts())
	if len(res.Problems) != 1 || res.Problems[0].Source != "HTTPRoute default/r spec.rules[0].retry" || res.Problems[0].Severity != "warning" {
		t.Errorf("problems %v", res.Problems)
	}
}
