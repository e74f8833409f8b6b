package gateway

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// routeMeta is what every route kind shares.
type routeMeta struct {
	kind string
	obj  metav1.ObjectMeta
}

func (m routeMeta) key() RouteKey {
	return RouteKey{Kind: m.kind, NamespacedName: types.NamespacedName{Namespace: m.obj.Namespace, Name: m.obj.Name}}
}

// parentStatus is one RouteParentStatus of ours.
func (t *translator) parentStatus(pm parentMatch, conds ...metav1.Condition) gwv1.RouteParentStatus {
	return gwv1.RouteParentStatus{ParentRef: pm.ref, ControllerName: gwv1.GatewayController(t.opts.ControllerName), Conditions: conds}
}

// resolvedRefs is the ResolvedRefs condition for the first refError.
func resolvedRefs(err *refError, gen int64) metav1.Condition {
	if err == nil {
		return cond(string(gwv1.RouteConditionResolvedRefs), true, string(gwv1.RouteReasonResolvedRefs), "", gen)
	}
	return cond(string(gwv1.RouteConditionResolvedRefs), false, string(err.reason), err.msg, gen)
}

// loadHTTPRoutes translates every HTTPRoute attached to our Gateways.
func (t *translator) loadHTTPRoutes() {
	for _, r := range t.in.HTTPRoutes {
		m := routeMeta{kind: "HTTPRoute", obj: r.ObjectMeta}
		t.loadRoute(m, r.Generation, r.Spec.ParentRefs, r.Spec.Hostnames, len(r.Spec.Rules),
			func(ri int) httpRule { return t.httpRule(m, r.Spec.Rules[ri], ri) },
			func(pm parentMatch, a attachment, ri int, rule httpRule) {
				t.httpRouters(m, pm, a, rule, r.Spec.Rules[ri].Matches, ri)
			})
	}
}

// loadRoute translates one HTTPRoute or GRPCRoute (m, generation gen)
// when parentRefs name any of our Gateways. rule builds each of its
// nrules rules once (they do not depend on the parent); routers adds the
// routers of rule ri for one listener attachment, called for each rule in
// order. The route's status gets one entry per parent, with Accepted and
// the ResolvedRefs of the first rule's backend error.
func (t *translator) loadRoute(m routeMeta, gen int64, parentRefs []gwv1.ParentReference, hostnames []gwv1.Hostname, nrules int,
	rule func(ri int) httpRule, routers func(pm parentMatch, a attachment, ri int, rule httpRule)) {
	pms := t.parents(m.obj.Namespace, parentRefs)
	if len(pms) == 0 {
		return
	}
	rules := make([]httpRule, nrules)
	var refErr *refError
	for ri := range rules {
		rules[ri] = rule(ri)
		if refErr == nil {
			refErr = rules[ri].err
		}
	}
	var sts []gwv1.RouteParentStatus
	for _, pm := range pms {
		atts, accepted := t.attach(pm, m.kind, m.obj.Namespace, gen, hostnames, true)
		for _, a := range atts {
			for ri, rule := range rules {
				routers(pm, a, ri, rule)
			}
		}
		sts = append(sts, t.parentStatus(pm, accepted, resolvedRefs(refErr, gen)))
	}
	t.status.Routes[m.key()] = sts
}

// httpRule is the parent-independent part of one rule: its service and
// the filters' middleware templates (built per match, for prefixes).
type httpRule struct {
	base    string
	service string
	filters []gwv1.HTTPRouteFilter
	err     *refError
}

// httpRule builds a rule's service: a weighted service over its
// backendRefs (each invalid one a 500 share), wrapped in a mirroring
// service for RequestMirror filters.
func (t *translator) httpRule(m routeMeta, rule gwv1.HTTPRouteRule, ri int) httpRule {
	hr := httpRule{base: objName("httproute", m.obj.Namespace, m.obj.Name, "r"+strconv.Itoa(ri)), filters: rule.Filters}
	field := fmt.Sprintf("spec.rules[%d]", ri)
	transport := t.timeouts(m, rule.Timeouts, hr.base, field)
	refs := make([]backendRef, 0, len(rule.BackendRefs))
	for _, b := range rule.BackendRefs {
		refs = append(refs, backendRef{ref: b.BackendObjectReference, weight: b.Weight, filters: b.Filters})
	}
	hr.service, hr.err = t.weightedService(m, hr.base, field, refs, "http", transport)
	if rule.Retry != nil {
		t.problem(providers.SeverityWarning, m.kind, m.obj.Namespace, m.obj.Name, field+".retry", "retry is not supported; requests are not retried")
	}
	if rule.SessionPersistence != nil {
		t.problem(providers.SeverityWarning, m.kind, m.obj.Namespace, m.obj.Name, field+".sessionPersistence", "sessionPersistence is not supported; requests are balanced without affinity")
	}
	hr.service, hr.err = t.mirrored(m, hr.base, field, rule.Filters, hr.service, hr.err)
	return hr
}

// mirrored wraps service in a mirroring service for the RequestMirror
// filters of a rule (HTTPRoute or GRPCRoute), returning the service to
// route to and the first reference error.
func (t *translator) mirrored(m routeMeta, base, field string, filters []gwv1.HTTPRouteFilter, service string, first *refError) (string, *refError) {
	var mirrors []config.MirrorService
	for fi, f := range filters {
		if f.Type != gwv1.HTTPRouteFilterRequestMirror || f.RequestMirror == nil {
			continue
		}
		scheme := "http"
		if m.kind == "GRPCRoute" {
			scheme = "h2c"
		}
		svc, rerr := t.httpService(m.kind, m.obj.Namespace, f.RequestMirror.BackendRef, scheme, "")
		if rerr != nil {
			t.problem(providers.SeverityError, m.kind, m.obj.Namespace, m.obj.Name, fmt.Sprintf("%s.filters[%d].requestMirror", field, fi), "%s", rerr.msg)
			if first == nil {
				first = rerr
			}
			continue
		}
		mirrors = append(mirrors, config.MirrorService{Name: svc, Percent: mirrorPercent(f.RequestMirror)})
	}
	if len(mirrors) == 0 {
		return service, first
	}
	name := base + "-mirror"
	t.conf.HTTP.Services[name] = &config.Service{Mirroring: &config.Mirroring{Service: service, Mirrors: mirrors}}
	return name, first
}

// mirrorPercent is the percentage of requests mirrored: percent, or the
// fraction rounded to a whole percent (Gantry's mirroring unit), else 100.
func mirrorPercent(f *gwv1.HTTPRequestMirrorFilter) int {
	switch {
	case f.Percent != nil:
		return int(*f.Percent)
	case f.Fraction != nil:
		d := ptrOr(f.Fraction.Denominator, 100)
		if d <= 0 {
			return 0
		}
		return int((int64(f.Fraction.Numerator)*100 + int64(d)/2) / int64(d))
	}
	return 100
}

// timeouts adds a serversTransport for a rule's timeouts and returns its
// name ("" for none). Gantry bounds the wait for the backend's response
// header with the shorter of request and backendRequest; "0s" disables a
// timeout (Gateway API GEP-1742).
func (t *translator) timeouts(m routeMeta, to *gwv1.HTTPRouteTimeouts, base, field string) string {
	if to == nil {
		return ""
	}
	var d time.Duration
	for name, v := range map[string]*gwv1.Duration{"request": to.Request, "backendRequest": to.BackendRequest} {
		if v == nil {
			continue
		}
		x, err := time.ParseDuration(string(*v))
		if err != nil || x < 0 {
			t.problem(providers.SeverityWarning, m.kind, m.obj.Namespace, m.obj.Name, field+".timeouts."+name, "%q is not a duration; ignored", *v)
			continue
		}
		if x > 0 && (d == 0 || x < d) {
			d = x
		}
	}
	if d == 0 {
		return ""
	}
	name := base + "-timeouts"
	t.conf.HTTP.ServersTransports[name] = &config.ServersTransport{
		ForwardingTimeouts: &config.ForwardingTimeouts{ResponseHeaderTimeout: config.DurationOf(d)},
	}
	return name
}

// httpRouters adds one router per match and hostname class for one
// listener attachment.
func (t *translator) httpRouters(m routeMeta, pm parentMatch, a attachment, hr httpRule, matches []gwv1.HTTPRouteMatch, ri int) {
	if len(matches) == 0 {
		matches = []gwv1.HTTPRouteMatch{{}}
	}
	groups := hostGroups(a.hosts)
	for mi, match := range matches {
		for gi, hosts := range groups {
			name := objName(hr.base, "gw", pm.gw.obj.Namespace, pm.gw.obj.Name, string(a.listener.spec.Name), "m"+strconv.Itoa(mi), "h"+strconv.Itoa(gi))
			path := ptrOr(match.Path, gwv1.HTTPPathMatch{})
			ptype, pval := ptrOr(path.Type, gwv1.PathMatchPathPrefix), ptrOr(path.Value, "/")
			parts := append(hostParts(hosts, a.listener.isolate), pathRule(ptype, pval))
			if match.Method != nil {
				parts = append(parts, "Method("+quote(string(*match.Method))+")")
			}
			for _, h := range match.Headers {
				parts = append(parts, matchPart("Header", string(h.Name), h.Value, ptrOr(h.Type, gwv1.HeaderMatchExact) == gwv1.HeaderMatchRegularExpression))
			}
			for _, q := range match.QueryParams {
				parts = append(parts, matchPart("Query", string(q.Name), q.Value, ptrOr(q.Type, gwv1.QueryParamMatchExact) == gwv1.QueryParamMatchRegularExpression))
			}
			t.addHTTPRouter(m, a, name, parts, hr.service, hr.filters, ptype, pval, ri, hosts, precedence{
				exactPath: ptype == gwv1.PathMatchExact,
				pathLen:   len(strings.TrimSuffix(pval, "/")),
				prefix:    ptype == gwv1.PathMatchPathPrefix,
				method:    match.Method != nil,
				headers:   len(match.Headers),
				queries:   len(match.QueryParams),
				match:     mi,
			})
		}
	}
}

// hostGroups splits hostnames into groups of equal precedence (one router
// each, so each gets its exact rank); no hostname: one empty group.
func hostGroups(hosts []string) [][]string {
	if len(hosts) == 0 {
		return [][]string{nil}
	}
	var order []hostClass
	byClass := map[hostClass][]string{}
	for _, h := range hosts {
		c := classOf(h)
		if _, ok := byClass[c]; !ok {
			order = append(order, c)
		}
		byClass[c] = append(byClass[c], h)
	}
	out := make([][]string, 0, len(order))
	for _, c := range order {
		out = append(out, byClass[c])
	}
	return out
}

// hostParts is the host part of a rule: the hostnames (any of them), and
// the more specific listeners' hostnames excluded (listener isolation).
func hostParts(hosts, isolate []string) []string {
	var parts []string
	switch len(hosts) {
	case 0:
	case 1:
		parts = append(parts, hostRule(hosts[0]))
	default:
		alts := make([]string, len(hosts))
		for i, h := range hosts {
			alts[i] = hostRule(h)
		}
		parts = append(parts, "("+strings.Join(alts, " || ")+")")
	}
	for _, h := range isolate {
		parts = append(parts, "!"+hostRule(h))
	}
	return parts
}

// pathRule matches a Gateway API path: Exact is the whole path;
// PathPrefix matches whole path elements ("/foo" matches "/foo" and
// "/foo/bar", not "/foobar"; a trailing "/" is ignored);
// RegularExpression must match the whole path (RE2).
func pathRule(typ gwv1.PathMatchType, v string) string {
	switch typ {
	case gwv1.PathMatchExact:
		return "Path(" + quote(v) + ")"
	case gwv1.PathMatchRegularExpression:
		return "PathRegexp(" + quote(anchor(v)) + ")"
	}
	p := strings.TrimRight(v, "/")
	if p == "" {
		return "PathPrefix(`/`)"
	}
	return "(Path(" + quote(p) + ") || PathPrefix(" + quote(p+"/") + "))"
}

// anchor makes a regular expression match whole values only.
func anchor(re string) string { return "^(?:" + re + ")$" }

// matchPart is the rule matcher of a header or query parameter match:
// fn ("Header" or "Query") with the exact value, or fn+"Regexp" with the
// value anchored when the match is a regular expression.
func matchPart(fn, name, value string, regexp bool) string {
	if regexp {
		return fn + "Regexp(" + quote(name) + ", " + quote(anchor(value)) + ")"
	}
	return fn + "(" + quote(name) + ", " + quote(value) + ")"
}

// addHTTPRouter publishes one HTTPRoute or GRPCRoute router on the
// listener attachment a: its rule is parts joined by "&&", its middlewares
// the rule's filters (a filter that fails makes the router answer 500), TLS
// on an HTTPS listener. key ranks it among the routers (Gateway API
// precedence); the host class, the route's identity and rule index are
// filled in here.
func (t *translator) addHTTPRouter(m routeMeta, a attachment, name string, parts []string, service string, filters []gwv1.HTTPRouteFilter, ptype gwv1.PathMatchType, pval string, ri int, hosts []string, key precedence) {
	router := &config.Router{RouterCommon: config.RouterCommon{EntryPoints: []string{a.listener.ep}, Rule: strings.Join(parts, " && "), Service: service}}
	if a.listener.spec.Protocol == gwv1.HTTPSProtocolType {
		router.TLS = &config.RouterTLSConfig{}
	}
	mws, failed := t.filters(m, name, filters, ptype, pval, int(a.listener.spec.Port), fmt.Sprintf("spec.rules[%d].filters", ri))
	router.Middlewares = mws
	if failed {
		router.Service = t.statusService(500)
	}
	t.conf.HTTP.Routers[name] = router
	key.created, key.ns, key.name, key.rule = m.obj.CreationTimestamp.Time, m.obj.Namespace, m.obj.Name, ri
	if len(hosts) > 0 {
		key.host = classOf(hosts[0])
	}
	t.routers = append(t.routers, rankedRouter{name: name, router: router, key: key})
}

// statusService returns the weighted service answering status.
func (t *translator) statusService(status int) string {
	name := "status-" + strconv.Itoa(status)
	if _, ok := t.conf.HTTP.Services[name]; !ok {
		t.conf.HTTP.Services[name] = &config.Service{Weighted: &config.WeightedRoundRobin{Services: []config.WRRService{{Status: new(status)}}}}
	}
	return name
}
