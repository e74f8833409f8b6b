package static

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"

	"github.com/gantry-proxy/gantry/config/node"
)

// Change kinds (Change.Kind).
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// Change is one difference between two static configurations. Path is the
// section in Traefik's key names: "entryPoints.<name>", "providers.<kind>"
// (file, docker, consulCatalog, consul, providersThrottleDuration),
// "certificatesResolvers.<name>", or a top-level section ("api", "log",
// "log.level", "accessLog", "store"…). Kind is Added, Removed or Changed.
// Options name the options under Path that differ, each with its own kind
// ("log.format" added, "entryPoints.web.address" changed), at most
// MaxOptions of them, sorted by path; empty when Path is itself a value
// (providers.providersThrottleDuration) or the section has no option set
// ("api: {}"). They carry names only, never values (secrets).
type Change struct {
	Path    string   `json:"path"`
	Kind    string   `json:"kind"`
	Options []Change `json:"options,omitempty"`
}

// MaxOptions bounds Change.Options (a whole provider section added can set
// dozens).
const MaxOptions = 20

// Diff returns what differs between prev and next, one Change per
// entrypoint, provider, certificate resolver and other top-level section
// (log.level apart from the rest of log), sorted by Path. Equal sections
// (reflect.DeepEqual of their decoded values) yield nothing; nil and an
// empty section differ (Traefik treats "api: {}" as enabled).
func Diff(prev, next *Configuration) []Change {
	if prev == nil {
		prev = &Configuration{}
	}
	if next == nil {
		next = &Configuration{}
	}
	var out []Change
	section := func(path string, a, b any) {
		na, nb := isNil(a), isNil(b)
		switch {
		case na && nb:
		case na:
			out = append(out, Change{Path: path, Kind: Added, Options: options(path, nil, b)})
		case nb:
			out = append(out, Change{Path: path, Kind: Removed, Options: options(path, a, nil)})
		case !reflect.DeepEqual(a, b):
			out = append(out, Change{Path: path, Kind: Changed, Options: options(path, a, b)})
		}
	}
	sections(section, "", reflect.ValueOf(prev).Elem(), reflect.ValueOf(next).Elem())
	slices.SortFunc(out, func(a, b Change) int {
		if a.Path < b.Path {
			return -1
		}
		if a.Path > b.Path {
			return 1
		}
		return 0
	})
	return out
}

// sections calls section for each field of the structs a and b (of one
// type, Configuration or Providers) by its JSON name under prefix: a map's
// entries one by one ("entryPoints.<name>"), the providers one by one
// ("providers.docker"), log.level apart from the rest of log, any other
// field whole.
func sections(section func(path string, a, b any), prefix string, a, b reflect.Value) {
	for i, f := range slices.Collect(a.Type().Fields()) {
		path := prefix + node.JSONName(f)
		fa, fb := a.Field(i), b.Field(i)
		switch f.Type {
		case reflect.TypeFor[*Providers]():
			sections(section, path+".", orZero(fa), orZero(fb))
		case reflect.TypeFor[*Log]():
			pl, nl := orZero(fa).Interface().(Log), orZero(fb).Interface().(Log)
			section("log.level", nonEmpty(pl.Level), nonEmpty(nl.Level))
			pl.Level, nl.Level = "", ""
			section(path, nonZero(pl), nonZero(nl))
		default:
			if f.Type.Kind() != reflect.Map {
				section(path, fa.Interface(), fb.Interface())
				continue
			}
			for _, k := range keys(stringKeys(fa), stringKeys(fb)) {
				section(path+"."+k, mapEntry(fa, k), mapEntry(fb, k))
			}
		}
	}
}

// orZero is what the pointer p points to, or a zero value of its type
// when p is nil.
func orZero(p reflect.Value) reflect.Value {
	if p.IsNil() {
		return reflect.Zero(p.Type().Elem())
	}
	return p.Elem()
}

// stringKeys is the set of the keys of m, a map with string keys.
func stringKeys(m reflect.Value) map[string]bool {
	out := make(map[string]bool, m.Len())
	for k := range m.Seq() {
		out[k.String()] = true
	}
	return out
}

// mapEntry is m[k], the element type's zero value (a nil pointer) when
// m has no key k.
func mapEntry(m reflect.Value, k string) any {
	v := m.MapIndex(reflect.ValueOf(k))
	if !v.IsValid() {
		v = reflect.Zero(m.Type().Elem())
	}
	return v.Interface()
}

// keys returns the names present in a or b, sorted.
func keys[V any](a, b map[string]V) []string {
	seen := maps.Clone(a)
	if seen == nil {
		seen = map[string]V{}
	}
	maps.Copy(seen, b)
	return slices.Sorted(maps.Keys(seen))
}

// isNil reports whether v is nil or a nil pointer.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	r := reflect.ValueOf(v)
	return r.Kind() == reflect.Pointer && r.IsNil()
}

// nonEmpty returns s as a value that isNil when s is "".
func nonEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nonZero returns l as a value that isNil when l is the zero Log.
func nonZero(l Log) any {
	if l == (Log{}) {
		return nil
	}
	return l
}

// options lists the options that differ between section values a and b
// (nil: absent), by their JSON (Traefik) names under path. Objects are
// walked key by key; lists and scalars are compared whole.
func options(path string, a, b any) []Change {
	var out []Change
	walkOptions(path, generic(a), generic(b), &out)
	slices.SortFunc(out, func(x, y Change) int {
		switch {
		case x.Path < y.Path:
			return -1
		case x.Path > y.Path:
			return 1
		}
		return 0
	})
	if len(out) > MaxOptions {
		out = out[:MaxOptions]
	}
	if len(out) == 1 && out[0].Path == path {
		return nil // the section is itself one value
	}
	return out
}

// generic is v as decoded JSON (maps, lists, scalars); nil for nil or a
// value that does not encode.
func generic(v any) any {
	if isNil(v) {
		return nil
	}
	js, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(js, &out) != nil {
		return nil
	}
	return out
}

func walkOptions(path string, a, b any, out *[]Change) {
	if len(*out) > MaxOptions {
		return
	}
	ma, aObj := a.(map[string]any)
	mb, bObj := b.(map[string]any)
	switch {
	case (aObj || a == nil) && (bObj || b == nil) && (aObj || bObj):
		for _, k := range keys(ma, mb) {
			walkOptions(path+"."+k, ma[k], mb[k], out)
		}
	case a == nil && b == nil:
	case a == nil:
		*out = append(*out, Change{Path: path, Kind: Added})
	case b == nil:
		*out = append(*out, Change{Path: path, Kind: Removed})
	case !reflect.DeepEqual(a, b):
		*out = append(*out, Change{Path: path, Kind: Changed})
	}
}
