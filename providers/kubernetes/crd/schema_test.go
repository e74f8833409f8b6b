package crd

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var update = flag.Bool("update", false, "rewrite examples/kubernetes/crds from the Go types")

// crdDir holds the CustomResourceDefinitions users apply.
const crdDir = "../../../examples/kubernetes/crds"

// TestCRDFiles checks that examples/kubernetes/crds is what the Go types
// generate (go test -run TestCRDFiles -update rewrites it): the schema the
// API server validates and prunes with, and the types the provider decodes
// into, cannot drift apart.
func TestCRDFiles(t *testing.T) {
	for _, k := range Kinds {
		want := crdYAML(t, k)
		path := filepath.Join(crdDir, k.Plural+".yaml")
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test -run TestCRDFiles -update writes it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what the %s type generates: go test ./providers/kubernetes/crd -run TestCRDFiles -update", path, k.Kind)
		}
	}
}

// crdYAML renders the CustomResourceDefinition of k.
func crdYAML(t *testing.T, k Kind) []byte {
	t.Helper()
	spec := schemaOf(k.spec, "")
	spec["description"] = k.Kind + " spec (Gantry reads Traefik v3.7's " + Group + "/" + Version + " " + k.Kind + " unchanged)."
	doc := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata": map[string]any{
			"name":   k.Plural + "." + Group,
			"labels": map[string]any{"app.kubernetes.io/part-of": "gantry"},
		},
		"spec": map[string]any{
			"group": Group,
			"names": map[string]any{
				"kind":     k.Kind,
				"listKind": k.Kind + "List",
				"plural":   k.Plural,
				"singular": k.Singular,
			},
			"scope": "Namespaced",
			"versions": []any{map[string]any{
				"name":    Version,
				"served":  true,
				"storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type":     "object",
					"required": []any{"metadata", "spec"},
					"properties": map[string]any{
						"apiVersion": map[string]any{"type": "string"},
						"kind":       map[string]any{"type": "string"},
						"metadata":   map[string]any{"type": "object"},
						"spec":       spec,
					},
				}},
			}},
		},
	}
	var b bytes.Buffer
	b.WriteString("# Generated from providers/kubernetes/crd (go test -run TestCRDFiles -update); do not edit.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var (
	intOrStringType = reflect.TypeFor[intstr.IntOrString]()
	durationType    = reflect.TypeFor[config.Duration]()
	rawType         = reflect.TypeFor[json.RawMessage]()
)

// schemaOf returns the structural OpenAPI v3 schema of Go type t as it
// decodes from JSON; tag is the field's crd tag (required is handled by
// the parent; enum=a|b, min=N).
func schemaOf(t reflect.Type, tag string) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s := map[string]any{}
	switch {
	case t == intOrStringType || t == durationType:
		s["x-kubernetes-int-or-string"] = true
		s["anyOf"] = []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}
	case t == rawType || t.Kind() == reflect.Interface:
		s["x-kubernetes-preserve-unknown-fields"] = true
	case t.Kind() == reflect.String:
		s["type"] = "string"
	case t.Kind() == reflect.Bool:
		s["type"] = "boolean"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		s["type"] = "integer"
		if t.Kind() == reflect.Int64 {
			s["format"] = "int64"
		}
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		s["type"] = "number"
	case t.Kind() == reflect.Slice:
		s["type"] = "array"
		s["items"] = schemaOf(t.Elem(), "")
	case t.Kind() == reflect.Map:
		s["type"] = "object"
		s["additionalProperties"] = schemaOf(t.Elem(), "")
	case t.Kind() == reflect.Struct:
		s["type"] = "object"
		props := map[string]any{}
		var required []any
		structFields(t, props, &required)
		if len(props) > 0 {
			s["properties"] = props
		}
		if len(required) > 0 {
			slices.SortFunc(required, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
			s["required"] = required
		}
	default:
		panic(fmt.Sprintf("no schema for %v", t))
	}
	for _, opt := range strings.Split(tag, ",") {
		key, val, _ := strings.Cut(opt, "=")
		switch key {
		case "enum":
			var e []any
			for _, v := range strings.Split(val, "|") {
				e = append(e, v)
			}
			s["enum"] = e
		case "min":
			n, _ := strconv.Atoi(val)
			s["minimum"] = n
		}
	}
	return s
}

// structFields adds t's JSON fields to props, inlining anonymous fields
// as encoding/json does.
func structFields(t reflect.Type, props map[string]any, required *[]any) {
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			structFields(ft, props, required)
			continue
		}
		if name == "" {
			name = f.Name
		}
		tag := f.Tag.Get("crd")
		props[name] = schemaOf(f.Type, tag)
		if slices.Contains(strings.Split(tag, ","), "required") {
			*required = append(*required, name)
		}
	}
}
