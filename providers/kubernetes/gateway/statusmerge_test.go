package gateway

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestMergeRouteParents(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Hour))
	ours := gwv1.RouteParentStatus{ParentRef: gwv1.ParentReference{Name: "gw"}, ControllerName: DefaultControllerName,
		Conditions: []metav1.Condition{cond("Accepted", true, "Accepted", "", 1)}}
	other := gwv1.RouteParentStatus{ParentRef: gwv1.ParentReference{Name: "x"}, ControllerName: "example.com/other",
		Conditions: []metav1.Condition{cond("Accepted", true, "Accepted", "", 1)}}

	got, changed := mergeRouteParents([]gwv1.RouteParentStatus{other}, []gwv1.RouteParentStatus{ours}, DefaultControllerName, t0)
	if !changed || len(got) != 2 || got[0].ControllerName != "example.com/other" || got[1].Conditions[0].LastTransitionTime != t0 {
		t.Fatalf("first write: %v %+v", changed, got)
	}
	// Same wanted status later: nothing to write, times kept.
	again, changed := mergeRouteParents(got, []gwv1.RouteParentStatus{ours}, DefaultControllerName, t1)
	if changed || again[1].Conditions[0].LastTransitionTime != t0 {
		t.Fatalf("unchanged status rewritten: %v %+v", changed, again)
	}
	// A new observedGeneration is a change, but the transition time stays.
	ours2 := ours
	ours2.Conditions = []metav1.Condition{cond("Accepted", true, "Accepted", "", 2)}
	g2, changed := mergeRouteParents(got, []gwv1.RouteParentStatus{ours2}, DefaultControllerName, t1)
	if !changed || g2[1].Conditions[0].LastTransitionTime != t0 || g2[1].Conditions[0].ObservedGeneration != 2 {
		t.Fatalf("generation bump: %v %+v", changed, g2)
	}
	// A status flip takes the new time.
	ours3 := ours
	ours3.Conditions = []metav1.Condition{cond("Accepted", false, "NotAllowedByListeners", "", 2)}
	g3, _ := mergeRouteParents(got, []gwv1.RouteParentStatus{ours3}, DefaultControllerName, t1)
	if g3[1].Conditions[0].LastTransitionTime != t1 {
		t.Fatalf("flip kept the old time: %+v", g3)
	}
	// No longer attached to our Gateway: our entry goes, the other stays.
	g4, changed := mergeRouteParents(got, nil, DefaultControllerName, t1)
	if !changed || len(g4) != 1 || g4[0].ControllerName != "example.com/other" {
		t.Fatalf("detach: %v %+v", changed, g4)
	}
}

func TestMergeGateway(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	want := gwv1.GatewayStatus{
		Conditions: []metav1.Condition{cond("Accepted", true, "Accepted", "", 1)},
		Listeners:  []gwv1.ListenerStatus{{Name: "http", AttachedRoutes: 1, SupportedKinds: []gwv1.RouteGroupKind{}, Conditions: []metav1.Condition{cond("Programmed", true, "Programmed", "", 1)}}},
	}
	got, changed := mergeGateway(gwv1.GatewayStatus{}, want, t0)
	if !changed {
		t.Fatal("first write not a change")
	}
	if _, changed := mergeGateway(got, want, metav1.NewTime(t0.Add(time.Minute))); changed {
		t.Error("unchanged Gateway status rewritten")
	}
	want.Listeners[0].AttachedRoutes = 2
	if _, changed := mergeGateway(got, want, t0); !changed {
		t.Error("attachedRoutes change not seen")
	}
}
