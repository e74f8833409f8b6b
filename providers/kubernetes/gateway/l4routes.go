package gateway

import (
	"fmt"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// l4Route is what TLSRoute, TCPRoute and UDPRoute share.
type l4Route struct {
	meta      routeMeta
	gen       int64
	parents   []gwv1.ParentReference
	hostnames []gwv1.Hostname
	useHosts  bool
	refs      [][]gwv1.BackendRef // per rule
}

func (t *translator) loadTLSRoutes() {
	for _, r := range t.in.TLSRoutes {
		refs := ruleRefs(r.Spec.Rules, func(rule gwv1.TLSRouteRule) []gwv1.BackendRef { return rule.BackendRefs })
		t.loadL4(l4Route{meta: routeMeta{"TLSRoute", r.ObjectMeta}, gen: r.Generation, parents: r.Spec.ParentRefs, hostnames: r.Spec.Hostnames, useHosts: true, refs: refs}, false)
	}
}

func (t *translator) loadTCPRoutes() {
	for _, r := range t.in.TCPRoutes {
		refs := ruleRefs(r.Spec.Rules, func(rule gwv1.TCPRouteRule) []gwv1.BackendRef { return rule.BackendRefs })
		t.loadL4(l4Route{meta: routeMeta{"TCPRoute", r.ObjectMeta}, gen: r.Generation, parents: r.Spec.ParentRefs, refs: refs}, false)
	}
}

func (t *translator) loadUDPRoutes() {
	for _, r := range t.in.UDPRoutes {
		refs := ruleRefs(r.Spec.Rules, func(rule gwv1.UDPRouteRule) []gwv1.BackendRef { return rule.BackendRefs })
		t.loadL4(l4Route{meta: routeMeta{"UDPRoute", r.ObjectMeta}, gen: r.Generation, parents: r.Spec.ParentRefs, refs: refs}, true)
	}
}

// ruleRefs is each rule's backendRefs, in rule order (l4Route.refs).
func ruleRefs[R any](rules []R, refs func(R) []gwv1.BackendRef) [][]gwv1.BackendRef {
	out := make([][]gwv1.BackendRef, 0, len(rules))
	for _, r := range rules {
		out = append(out, refs(r))
	}
	return out
}

// loadL4 translates one TLS, TCP or UDP route: a weighted service over
// every rule's valid backendRefs (invalid ones are left out: a connection
// cannot be answered 500), and one router per listener attachment.
func (t *translator) loadL4(r l4Route, udp bool) {
	pms := t.parents(r.meta.obj.Namespace, r.parents)
	if len(pms) == 0 {
		return
	}
	m := r.meta
	var first *refError
	var children []config.WRRService
	for ri, refs := range r.refs {
		for bi, b := range refs {
			svc, rerr := t.l4Service(m.kind, m.obj.Namespace, b.BackendObjectReference, udp)
			if rerr != nil {
				t.problem(providers.SeverityError, m.kind, m.obj.Namespace, m.obj.Name, fmt.Sprintf("spec.rules[%d].backendRefs[%d]", ri, bi), "%s", rerr.msg)
				if first == nil {
					first = rerr
				}
				continue
			}
			if w := int(ptrOr(b.Weight, 1)); w > 0 {
				children = append(children, config.WRRService{Name: svc, Weight: new(w)})
			}
		}
	}
	base := objName(strings.ToLower(m.kind), m.obj.Namespace, m.obj.Name)
	service := ""
	if len(children) > 0 {
		service = base + "-wrr"
		if udp {
			t.conf.EnsureUDP().Services[service] = &config.UDPService{Weighted: &config.UDPWeightedRoundRobin{Services: children}}
		} else {
			t.conf.EnsureTCP().Services[service] = &config.TCPService{Weighted: &config.TCPWeightedRoundRobin{Services: children}}
		}
	}
	var sts []gwv1.RouteParentStatus
	for _, pm := range pms {
		atts, accepted := t.attach(pm, m.kind, m.obj.Namespace, r.gen, r.hostnames, r.useHosts)
		for _, a := range atts {
			if service == "" {
				continue
			}
			name := objName(base, "gw", pm.gw.obj.Namespace, pm.gw.obj.Name, string(a.listener.spec.Name))
			if udp {
				t.conf.EnsureUDP().Routers[name] = &config.UDPRouter{EntryPoints: []string{a.listener.ep}, Service: service}
				continue
			}
			router := &config.TCPRouter{RouterCommon: config.RouterCommon{EntryPoints: []string{a.listener.ep}, Service: service, Rule: sniRule(a.hosts)}}
			switch {
			case a.listener.spec.Protocol != gwv1.TLSProtocolType:
			case a.listener.passthrough():
				router.TLS = &config.RouterTCPTLSConfig{Passthrough: true}
			default:
				router.TLS = &config.RouterTCPTLSConfig{}
			}
			t.conf.EnsureTCP().Routers[name] = router
		}
		sts = append(sts, t.parentStatus(pm, accepted, l4Resolved(first, r.gen)))
	}
	t.status.Routes[m.key()] = sts
}

func l4Resolved(err *refError, gen int64) metav1.Condition { return resolvedRefs(err, gen) }

// sniRule matches the SNI names of hosts (any name when none).
func sniRule(hosts []string) string {
	if len(hosts) == 0 {
		return "HostSNI(`*`)"
	}
	alts := make([]string, len(hosts))
	for i, h := range hosts {
		if strings.HasPrefix(h, "*.") {
			alts[i] = "HostSNIRegexp(" + quote(`^.+`+regexp.QuoteMeta(h[1:])+`$`) + ")"
		} else {
			alts[i] = "HostSNI(" + quote(h) + ")"
		}
	}
	return strings.Join(alts, " || ")
}
