package gateway

import (
	"fmt"
	"regexp"
	"strconv"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// loadGRPCRoutes translates GRPCRoutes: a gRPC method is the HTTP/2 path
// "/<service>/<method>"; backends default to h2c.
// Source: https://gateway-api.sigs.k8s.io/api-types/grpcroute/
func (t *translator) loadGRPCRoutes() {
	for _, r := range t.in.GRPCRoutes {
		m := routeMeta{kind: "GRPCRoute", obj: r.ObjectMeta}
		t.loadRoute(m, r.Generation, r.Spec.ParentRefs, r.Spec.Hostnames, len(r.Spec.Rules),
			func(ri int) httpRule { return t.grpcRule(m, r.Spec.Rules[ri], ri) },
			func(pm parentMatch, a attachment, ri int, rule httpRule) {
				matches := r.Spec.Rules[ri].Matches
				if len(matches) == 0 {
					matches = []gwv1.GRPCRouteMatch{{}}
				}
				for mi, match := range matches {
					t.grpcRouter(m, pm, a, rule.service, rule.filters, match, ri, mi)
				}
			})
	}
}

// grpcRule builds a GRPCRoute rule's service (as httpRule, the backends
// spoken to in h2c) and converts its filters.
func (t *translator) grpcRule(m routeMeta, rule gwv1.GRPCRouteRule, ri int) httpRule {
	hr := httpRule{base: objName("grpcroute", m.obj.Namespace, m.obj.Name, "r"+strconv.Itoa(ri)), filters: grpcFilters(rule.Filters)}
	field := fmt.Sprintf("spec.rules[%d]", ri)
	refs := make([]backendRef, 0, len(rule.BackendRefs))
	for _, b := range rule.BackendRefs {
		refs = append(refs, backendRef{ref: b.BackendObjectReference, weight: b.Weight, filters: grpcFilters(b.Filters)})
	}
	hr.service, hr.err = t.weightedService(m, hr.base, field, refs, "h2c", "")
	hr.service, hr.err = t.mirrored(m, hr.base, field, hr.filters, hr.service, hr.err)
	return hr
}

// grpcFilters converts GRPCRoute filters to their HTTPRoute equivalents
// (same semantics for the header modifiers, mirror and extensionRef).
func grpcFilters(fs []gwv1.GRPCRouteFilter) []gwv1.HTTPRouteFilter {
	out := make([]gwv1.HTTPRouteFilter, 0, len(fs))
	for _, f := range fs {
		out = append(out, gwv1.HTTPRouteFilter{
			Type:                   gwv1.HTTPRouteFilterType(f.Type),
			RequestHeaderModifier:  f.RequestHeaderModifier,
			ResponseHeaderModifier: f.ResponseHeaderModifier,
			RequestMirror:          f.RequestMirror,
			ExtensionRef:           f.ExtensionRef,
		})
	}
	return out
}

func (t *translator) grpcRouter(m routeMeta, pm parentMatch, a attachment, service string, filters []gwv1.HTTPRouteFilter, match gwv1.GRPCRouteMatch, ri, mi int) {
	var svc, meth string
	typ := gwv1.GRPCMethodMatchExact
	if match.Method != nil {
		svc, meth = ptrOr(match.Method.Service, ""), ptrOr(match.Method.Method, "")
		typ = ptrOr(match.Method.Type, gwv1.GRPCMethodMatchExact)
	}
	var path string
	switch {
	case svc == "" && meth == "":
		path = "PathPrefix(`/`)"
	case typ == gwv1.GRPCMethodMatchRegularExpression:
		s, me := svc, meth
		if s == "" {
			s = "[^/]+"
		}
		if me == "" {
			me = "[^/]+"
		}
		path = "PathRegexp(" + quote("^/(?:"+s+")/(?:"+me+")$") + ")"
	case meth == "":
		path = "PathPrefix(" + quote("/"+svc+"/") + ")"
	case svc == "":
		path = "PathRegexp(" + quote("^/[^/]+/"+regexp.QuoteMeta(meth)+"$") + ")"
	default:
		path = "Path(" + quote("/"+svc+"/"+meth) + ")"
	}
	for gi, hosts := range hostGroups(a.hosts) {
		name := objName("grpcroute", m.obj.Namespace, m.obj.Name, "r"+strconv.Itoa(ri), "gw", pm.gw.obj.Namespace, pm.gw.obj.Name, string(a.listener.spec.Name), "m"+strconv.Itoa(mi), "h"+strconv.Itoa(gi))
		parts := append(hostParts(hosts, a.listener.isolate), path)
		for _, h := range match.Headers {
			parts = append(parts, matchPart("Header", string(h.Name), h.Value, ptrOr(h.Type, gwv1.GRPCHeaderMatchExact) == gwv1.GRPCHeaderMatchRegularExpression))
		}
		t.addHTTPRouter(m, a, name, parts, service, filters, "", "", ri, hosts, precedence{
			exactPath: svc != "" && meth != "" && typ == gwv1.GRPCMethodMatchExact,
			pathLen:   len(svc) + len(meth),
			prefix:    typ == gwv1.GRPCMethodMatchExact,
			headers:   len(match.Headers),
			match:     mi,
		})
	}
}
