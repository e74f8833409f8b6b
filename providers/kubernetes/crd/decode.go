package crd

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gantry-proxy/gantry/providers"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Decode converts objects of every kind, as dynamic informers hold them
// (keyed by Kind.Kind), into an Input. An object whose spec does not decode
// into its type (a field of another type than Traefik's, or one these
// types do not know, e.g. from a newer CRD) is left out with an error
// Problem naming it and the field.
func Decode(objs map[string][]*unstructured.Unstructured) (*Input, []providers.Problem) {
	in := &Input{}
	var probs []providers.Problem
	for _, k := range Kinds {
		for _, u := range objs[k.Kind] {
			if err := k.decode(u, in); err != nil {
				probs = append(probs, providers.Problem{
					Provider: ProviderName, Source: source(k.Kind, u.GetNamespace(), u.GetName()),
					Message: err.Error() + ": object ignored", Severity: providers.SeverityError,
				})
			}
		}
	}
	return in, probs
}

// decodeInto decodes u's spec strictly and appends the object to dst.
func decodeInto[S any](u *unstructured.Unstructured, dst *[]*Object[S]) error {
	o := &Object[S]{
		Namespace:    u.GetNamespace(),
		Name:         u.GetName(),
		GenerateName: u.GetGenerateName(),
		Annotations:  u.GetAnnotations(),
	}
	spec, ok := u.Object["spec"]
	if !ok {
		return fmt.Errorf("spec: missing")
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o.Spec); err != nil {
		return fmt.Errorf("spec: %w", fieldError(err))
	}
	*dst = append(*dst, o)
	return nil
}

// fieldError rewrites encoding/json's type errors as "field a.b: want T,
// got V" (the field path relative to spec).
func fieldError(err error) error {
	if te, ok := err.(*json.UnmarshalTypeError); ok && te.Field != "" {
		return fmt.Errorf("field %s: want %v, got JSON %s", te.Field, te.Type, te.Value)
	}
	return err
}
