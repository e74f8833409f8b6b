package gateway

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// mergeConditions returns want with each condition's LastTransitionTime
// taken from have when its status did not change, else now (what
// metav1.Condition asks of a controller).
func mergeConditions(have, want []metav1.Condition, now metav1.Time) []metav1.Condition {
	out := make([]metav1.Condition, len(want))
	for i, c := range want {
		if old := findCond(have, c.Type); old != nil && old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		} else {
			c.LastTransitionTime = now
		}
		out[i] = c
	}
	return out
}

// mergeGatewayClass returns the status to write and whether it differs
// from have.
func mergeGatewayClass(have gwv1.GatewayClassStatus, want GatewayClassStatus, now metav1.Time) (gwv1.GatewayClassStatus, bool) {
	out := have
	out.Conditions = mergeConditions(have.Conditions, want.Conditions, now)
	// Keep conditions other controllers or the API server set.
	for _, c := range have.Conditions {
		if findCond(out.Conditions, c.Type) == nil {
			out.Conditions = append(out.Conditions, c)
		}
	}
	out.SupportedFeatures = want.SupportedFeatures
	return out, !reflect.DeepEqual(have, out)
}

// mergeGateway returns the Gateway status to write and whether it differs.
func mergeGateway(have, want gwv1.GatewayStatus, now metav1.Time) (gwv1.GatewayStatus, bool) {
	out := want
	out.AttachedListenerSets = have.AttachedListenerSets
	out.Conditions = mergeConditions(have.Conditions, want.Conditions, now)
	out.Listeners = make([]gwv1.ListenerStatus, len(want.Listeners))
	for i, l := range want.Listeners {
		var old []metav1.Condition
		for _, hl := range have.Listeners {
			if hl.Name == l.Name {
				old = hl.Conditions
			}
		}
		l.Conditions = mergeConditions(old, l.Conditions, now)
		out.Listeners[i] = l
	}
	return out, !reflect.DeepEqual(normGateway(have), normGateway(out))
}

// normGateway makes nil and empty slices compare equal.
func normGateway(s gwv1.GatewayStatus) gwv1.GatewayStatus {
	if len(s.Addresses) == 0 {
		s.Addresses = nil
	}
	if len(s.Conditions) == 0 {
		s.Conditions = nil
	}
	if len(s.Listeners) == 0 {
		s.Listeners = nil
	}
	return s
}

// mergeRouteParents returns a route's status.parents with the entries of
// controller replaced by want (conditions' times kept when unchanged) and
// the other controllers' entries kept, and whether it differs.
func mergeRouteParents(have []gwv1.RouteParentStatus, want []gwv1.RouteParentStatus, controller string, now metav1.Time) ([]gwv1.RouteParentStatus, bool) {
	var out []gwv1.RouteParentStatus
	for _, p := range have {
		if string(p.ControllerName) != controller {
			out = append(out, p)
		}
	}
	for _, w := range want {
		var old []metav1.Condition
		for _, p := range have {
			if string(p.ControllerName) == controller && reflect.DeepEqual(p.ParentRef, w.ParentRef) {
				old = p.Conditions
			}
		}
		w.Conditions = mergeConditions(old, w.Conditions, now)
		out = append(out, w)
	}
	if len(out) == 0 && len(have) == 0 {
		return have, false
	}
	return out, !reflect.DeepEqual(have, out)
}
