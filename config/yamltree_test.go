package config

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// The walk gives what yaml.v3's own decoding into interface{} gives (keys
// written with fmt.Sprint), for the Traefik reference file and for anchors,
// merges and typed scalars.
func TestDecodeYAMLMatchesYAMLv3(t *testing.T) {
	ref, err := os.ReadFile("testdata/traefik-dynamic.yml")
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{
		"reference": string(ref),
		"anchors": `
base: &base {a: 1, b: two}
other: &other {b: 3, c: 4.5}
one: {<<: *base, a: 9}
many:
  <<: [*base, *other]
  d: null
list: [*base, ~, true, 0x1F, 1e3, "7", 2001-12-14]
codes: {418: 404, 1.5: x, true: y}
`,
		"empty document": "",
		"comment only":   "# nothing\n",
	}
	for name, doc := range docs {
		var want any
		if err := yaml.Unmarshal([]byte(doc), &want); err != nil {
			t.Fatalf("%s: yaml.v3: %v", name, err)
		}
		got, err := decodeYAML(context.Background(), []byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := sprintKeys(want); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", name, got, want)
		}
	}
}

// sprintKeys rewrites yaml.v3's map[any]any with fmt.Sprint keys.
func sprintKeys(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = sprintKeys(e)
		}
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmtKey(k)] = sprintKeys(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = sprintKeys(e)
		}
	}
	return v
}

func TestDecodeYAMLErrors(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i, prev := 0, "a"; i < 9; i++ {
		n := string(rune('b' + i))
		bomb += n + ": &" + n + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n"
		prev = n
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"duplicate key", "http:\n  routers:\n    a: {}\n    b: {}\n    a: {}\n", `yaml: line 5: mapping key "a" already defined at line 3`},
		{"bad merge", "a: 1\nb: {<<: *x}\n", "unknown anchor"},
		{"merge of a scalar", "a: &a 1\nb: {<<: *a}\n", "line 2: map merge requires map or sequence of maps"},
		{"alias bomb", bomb, "excessive aliasing"},
	} {
		_, err := decodeYAML(context.Background(), []byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// A decode stops with the context's error once it ends.
func TestDecodeYAMLCancelled(t *testing.T) {
	var b strings.Builder
	b.WriteString("http:\n  routers:\n")
	for i := range 20000 {
		b.WriteString("    r" + strings.Repeat("x", 3) + itoa(i) + ": {service: s}\n")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := DecodeContext(ctx, []byte(b.String()), YAML); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func itoa(i int) string { return fmt.Sprint(i) }

func fmtKey(k any) string { return fmt.Sprint(k) }

// A YAML syntax error reads "yaml: line N: ..." once (the static file
// loader showed "gantry.yml: yaml: yaml: line 2: ...").
func TestDecodeGenericYAMLErrorPrefixedOnce(t *testing.T) {
	_, err := DecodeGeneric(context.Background(), []byte("a: 1\n  b: [\n"), YAML)
	if err == nil {
		t.Fatal("no error for invalid YAML")
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "yaml: line ") || strings.Contains(msg, "yaml: yaml") {
		t.Errorf("error %q, want one \"yaml: line N:\" prefix", msg)
	}
}
