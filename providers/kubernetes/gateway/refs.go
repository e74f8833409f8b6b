package gateway

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// granted reports whether a ReferenceGrant in toNS lets objects of
// fromGroup/fromKind in fromNS refer to toGroup/toKind toName.
// Source: https://gateway-api.sigs.k8s.io/api-types/referencegrant/
func (t *translator) granted(fromGroup, fromKind, fromNS, toGroup, toKind, toNS, toName string) bool {
	for _, rg := range t.in.ReferenceGrants {
		if rg.Namespace != toNS {
			continue
		}
		from := false
		for _, f := range rg.Spec.From {
			if string(f.Group) == fromGroup && string(f.Kind) == fromKind && string(f.Namespace) == fromNS {
				from = true
				break
			}
		}
		if !from {
			continue
		}
		for _, to := range rg.Spec.To {
			if string(to.Group) == toGroup && string(to.Kind) == toKind && (to.Name == nil || *to.Name == "" || string(*to.Name) == toName) {
				return true
			}
		}
	}
	return false
}

// allows reports whether listener l admits a route of kind from namespace ns.
func (l *listener) allows(kind, ns string, nsLabels map[string]labels.Set) bool {
	kindOK := false
	for _, k := range l.kinds {
		if string(k.Kind) == kind {
			kindOK = true
		}
	}
	if !kindOK {
		return false
	}
	switch l.from {
	case gwv1.NamespacesFromAll:
		return true
	case gwv1.NamespacesFromSelector:
		return l.selector != nil && l.selector.Matches(nsLabels[ns])
	default:
		return ns == l.gw.obj.Namespace
	}
}

// parentMatch is one parentRef of a route naming one of our Gateways.
type parentMatch struct {
	ref       gwv1.ParentReference
	gw        *gateway
	listeners []*listener // those the sectionName and port select
}

// parents resolves a route's parentRefs to our Gateways; refs to other
// objects or to Gateways of other controllers are left out (their status
// is not ours to write).
func (t *translator) parents(routeNS string, refs []gwv1.ParentReference) []parentMatch {
	var out []parentMatch
	for _, ref := range refs {
		if ptrOr(ref.Group, gwv1.GroupName) != gwv1.GroupName || ptrOr(ref.Kind, "Gateway") != "Gateway" {
			continue
		}
		ns := string(ptrOr(ref.Namespace, gwv1.Namespace(routeNS)))
		for _, g := range t.gateways {
			if g.obj.Namespace != ns || g.obj.Name != string(ref.Name) {
				continue
			}
			pm := parentMatch{ref: ref, gw: g}
			for _, l := range g.listeners {
				if ref.SectionName != nil && *ref.SectionName != l.spec.Name {
					continue
				}
				if ref.Port != nil && *ref.Port != l.spec.Port {
					continue
				}
				pm.listeners = append(pm.listeners, l)
			}
			out = append(out, pm)
		}
	}
	return out
}

// attachment is how a route attaches to one parent.
type attachment struct {
	listener *listener
	hosts    []string // intersected hostnames; empty: any
}

// attach decides a route's Accepted condition for one parent and the
// listeners it is served on. hostnames is nil for kinds without
// hostnames (TCPRoute, UDPRoute).
func (t *translator) attach(pm parentMatch, kind, ns string, gen int64, hostnames []gwv1.Hostname, useHosts bool) ([]attachment, metav1.Condition) {
	accepted := cond(string(gwv1.RouteConditionAccepted), false, string(gwv1.RouteReasonNoMatchingParent), "no listener of the Gateway matches the parentRef's sectionName and port", gen)
	if !pm.gw.accepted {
		accepted.Reason, accepted.Message = string(gwv1.RouteReasonNoMatchingParent), "the Gateway is not accepted"
		return nil, accepted
	}
	var out []attachment
	allowed := false
	for _, l := range pm.listeners {
		if !l.allows(kind, ns, t.nsLabels) {
			continue
		}
		allowed = true
		var hosts []string
		if useHosts {
			var ok bool
			if hosts, ok = intersect(l.spec.Hostname, hostnames); !ok {
				continue
			}
		}
		l.attached++
		if l.valid {
			out = append(out, attachment{listener: l, hosts: hosts})
		}
	}
	switch {
	case len(pm.listeners) == 0:
	case !allowed:
		accepted.Reason, accepted.Message = string(gwv1.RouteReasonNotAllowedByListeners), fmt.Sprintf("no listener admits %s from namespace %s", kind, ns)
	case len(out) == 0 && useHosts && !anyHostMatch(pm.listeners, kind, ns, hostnames, t.nsLabels):
		accepted.Reason, accepted.Message = string(gwv1.RouteReasonNoMatchingListenerHostname), "no hostname of the route matches a listener's hostname"
	case len(out) == 0:
		accepted.Reason, accepted.Message = string(gwv1.RouteReasonNoMatchingParent), "the listeners it may attach to are not valid"
	default:
		accepted = cond(string(gwv1.RouteConditionAccepted), true, string(gwv1.RouteReasonAccepted), "", gen)
	}
	return out, accepted
}

func anyHostMatch(ls []*listener, kind, ns string, hostnames []gwv1.Hostname, nsLabels map[string]labels.Set) bool {
	for _, l := range ls {
		if _, ok := intersect(l.spec.Hostname, hostnames); ok && l.allows(kind, ns, nsLabels) {
			return true
		}
	}
	return false
}
