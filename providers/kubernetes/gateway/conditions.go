package gateway

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// cond builds a condition of type t, True when ok.
func cond(t string, ok bool, reason, msg string, gen int64) metav1.Condition {
	s := metav1.ConditionFalse
	if ok {
		s = metav1.ConditionTrue
	}
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: gen}
}

// setCond replaces the condition of c's type in cs, or appends it.
func setCond(cs []metav1.Condition, c metav1.Condition) []metav1.Condition {
	for i := range cs {
		if cs[i].Type == c.Type {
			cs[i] = c
			return cs
		}
	}
	return append(cs, c)
}

// findCond returns the condition of type t, or nil.
func findCond(cs []metav1.Condition, t string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}
