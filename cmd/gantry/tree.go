package main

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// A tree is a generic configuration: map[string]any whose leaves are
// strings (flags, environment), or the scalars and lists YAML and TOML give.
// normalize rewrites one tree against the static configuration's types:
// struct keys become their JSON field names (matched case-insensitively, as
// Traefik does), string values are converted to the field's kind, and keys
// that match no field are dropped with a warning naming them.

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// normalizer carries the warnings and errors of one normalize pass.
type normalizer struct {
	source   string // "file /etc/traefik/traefik.yml", "flags", "environment"
	warnings []string
	errs     []error
}

func (n *normalizer) warnf(format string, args ...any) {
	n.warnings = append(n.warnings, n.source+": "+fmt.Sprintf(format, args...))
}

func (n *normalizer) errorf(format string, args ...any) {
	n.errs = append(n.errs, fmt.Errorf("%s: "+format, append([]any{n.source}, args...)...))
}

// normalize returns v rewritten for type t, or ok=false to drop it.
func (n *normalizer) normalize(v any, t reflect.Type, path string) (any, bool) {
	if v == nil {
		return nil, false
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if pt := reflect.PointerTo(t); pt.Implements(jsonUnmarshaler) || pt.Implements(textUnmarshaler) {
		return n.custom(v, t, path)
	}
	switch t.Kind() {
	case reflect.Struct:
		return n.structValue(v, t, path)
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			n.errorf("option %s: want a mapping, got %v", path, v)
			return nil, false
		}
		out := map[string]any{}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if x, ok := n.normalize(m[k], t.Elem(), path+"."+k); ok {
				out[k] = x
			}
		}
		return out, true
	case reflect.Slice:
		var items []any
		switch x := v.(type) {
		case []any:
			items = x
		case map[string]any:
			// Indexed flags: "--x.domains[0].main=a" or env "X_DOMAINS_0_MAIN=a".
			var ok bool
			if items, ok = indexed(x); !ok {
				n.errorf("option %s: want a list (indexes 0, 1, …), got keys %v", path, slices.Sorted(maps.Keys(x)))
				return nil, false
			}
		case string:
			for s := range strings.SplitSeq(x, ",") {
				if s = strings.TrimSpace(s); s != "" {
					items = append(items, s)
				}
			}
		default:
			items = []any{x}
		}
		out := make([]any, 0, len(items))
		for i, it := range items {
			if x, ok := n.normalize(it, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); ok {
				out = append(out, x)
			}
		}
		return out, true
	case reflect.Bool:
		if s, ok := v.(string); ok {
			b, err := strconv.ParseBool(s)
			if err != nil {
				n.errorf("option %s: want true or false, got %q", path, s)
				return nil, false
			}
			return b, true
		}
		return v, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if s, ok := v.(string); ok {
			i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				n.errorf("option %s: want an integer, got %q", path, s)
				return nil, false
			}
			return i, true
		}
		return v, true
	case reflect.Float32, reflect.Float64:
		if s, ok := v.(string); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				n.errorf("option %s: want a number, got %q", path, s)
				return nil, false
			}
			return f, true
		}
		return v, true
	case reflect.String:
		return scalar(v), true
	}
	return v, true
}

// custom checks a value for a type with its own decoding (config.Duration)
// by decoding it once, so that an error names the option.
func (n *normalizer) custom(v any, t reflect.Type, path string) (any, bool) {
	if _, isMap := v.(map[string]any); isMap {
		n.errorf("option %s: want a value, got a section", path)
		return nil, false
	}
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, reflect.New(t).Interface())
	}
	if err != nil {
		n.errorf("option %s: %v", path, err)
		return nil, false
	}
	return v, true
}

// indexed turns {"0": a, "1": b} into [a b]; false when a key is not an
// index.
func indexed(m map[string]any) ([]any, bool) {
	idx := make([]int, 0, len(m))
	for k := range m {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 {
			return nil, false
		}
		idx = append(idx, i)
	}
	slices.Sort(idx)
	out := make([]any, 0, len(idx))
	for _, i := range idx {
		out = append(out, m[strconv.Itoa(i)])
	}
	return out, true
}

// scalar renders numbers and booleans as strings where a string is wanted
// (YAML reads "address: 80" as a number).
func scalar(v any) any {
	switch x := v.(type) {
	case string, map[string]any, []any:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	default:
		return fmt.Sprint(x)
	}
}

// structValue normalizes a mapping for struct type t. A section given as a
// boolean ("--providers.docker=true", "--api") means an empty section when
// true and no section when false, as in Traefik's flag parser.
func (n *normalizer) structValue(v any, t reflect.Type, path string) (any, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return map[string]any{}, true
		}
		return nil, false
	case string:
		b, err := strconv.ParseBool(x)
		if err != nil {
			n.errorf("option %s: want a section or true/false, got %q", path, x)
			return nil, false
		}
		return n.structValue(b, t, path)
	case map[string]any:
		out := map[string]any{}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			f, ok := fieldByName(t, k)
			if !ok {
				for _, leaf := range leafPaths(x[k], p) {
					n.warnf("unknown or unsupported option %s: ignored", leaf)
				}
				continue
			}
			if y, ok := n.normalize(x[k], f.Type, p); ok {
				// "entryPoints" and "entrypoints" are one field: merge.
				name := jsonName(f)
				prev, pok := out[name].(map[string]any)
				cur, cok := y.(map[string]any)
				if pok && cok {
					y = merge(prev, cur)
				}
				out[name] = y
			}
		}
		return out, true
	}
	n.errorf("option %s: want a section, got %v", path, v)
	return nil, false
}

// leafPaths lists the dotted paths of every leaf under v, sorted, or just
// prefix when v is not a mapping.
func leafPaths(v any, prefix string) []string {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return []string{prefix}
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, leafPaths(m[k], prefix+"."+k)...)
	}
	return out
}

// fieldByName finds the exported field of t whose JSON name equals name,
// ignoring case.
func fieldByName(t reflect.Type, name string) (reflect.StructField, bool) {
	for f := range t.Fields() {
		if f.IsExported() && strings.EqualFold(jsonName(f), name) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" || name == "-" {
		return f.Name
	}
	return name
}

// merge lays src over dst (both normalized): mappings merge key by key,
// anything else in src replaces dst.
func merge(dst, src map[string]any) map[string]any {
	if dst == nil {
		dst = map[string]any{}
	}
	for k, v := range src {
		sm, sok := v.(map[string]any)
		dm, dok := dst[k].(map[string]any)
		if sok && dok {
			dst[k] = merge(dm, sm)
			continue
		}
		dst[k] = v
	}
	return dst
}

// decodeInto marshals a normalized tree and decodes it into out (a pointer),
// naming the field of a type mismatch.
func decodeInto(tree map[string]any, out any) error {
	b, err := json.Marshal(tree)
	if err != nil {
		return fmt.Errorf("encode configuration: %w", err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			return fmt.Errorf("option %s: cannot use %s as %s", te.Field, te.Value, te.Type)
		}
		return err
	}
	return nil
}
