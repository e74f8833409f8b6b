package node

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// Error is one key that could not be decoded.
type Error struct {
	// Node is where the error is: its Key and Where name the input.
	Node *Node
	// Key is the full key as written (Node.Key, or for a node nobody wrote
	// as such, one of the keys under it).
	Key string
	// Err says what is wrong; an *UnknownFieldError for a key that names
	// no field.
	Err error
}

func (e Error) Error() string { return e.Key + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e Error) Unwrap() error { return e.Err }

// UnknownFieldError is a key segment that names no field of its struct.
type UnknownFieldError struct {
	// Name is the segment as written.
	Name string
	// Suggestion is the field name closest to Name (at most two edits
	// away), "" when none is close.
	Suggestion string
	// dotted is set at an object's root when the unknown segment has
	// sub-keys: the user probably put a dot in an object name.
	dotted bool
}

func (e *UnknownFieldError) Error() string {
	if e.dotted {
		return fmt.Sprintf("unknown field %q (object names cannot contain \".\")", e.Name)
	}
	return fmt.Sprintf("unknown field %q", e.Name)
}

// Options change how Decode treats a tree.
type Options struct {
	// Object marks the root as one named object (a router, a service):
	// an unknown first segment with sub-keys gets a hint about dots in
	// object names.
	Object bool
	// Layer decodes over values set by an earlier tree (the static
	// configuration's file, environment and flags, later winning):
	// sections and maps merge key by key, while a list replaces the
	// earlier one instead of merging with it element by element.
	Layer bool
	// Whole reports an unknown field once, at the node written, instead of
	// once per key under it: for trees whose every node has a Key (files).
	Whole bool
	// Special decodes types the struct walk must not enter, before it
	// does: it returns false to let Decode carry on. Labels use it for
	// Traefik's singular "loadbalancer.server" key.
	Special func(v reflect.Value, n *Node, d Decoder) ([]Error, bool)
}

// Decoder decodes trees with its Options.
type Decoder struct{ Options }

// Decode fills v (a settable value or a pointer) from n and returns one
// Error per key that could not be decoded, in tree order. What decoded is
// kept: callers that drop an object with errors do so themselves.
func Decode(v reflect.Value, n *Node, o Options) []Error {
	return Decoder{o}.Set(v, n, o.Object)
}

var durationType = reflect.TypeFor[config.Duration]()

// Set decodes n into v. top is true for an object's root.
func (d Decoder) Set(v reflect.Value, n *Node, top bool) []Error {
	if d.Special != nil {
		if errs, ok := d.Special(v, n, d); ok {
			return errs
		}
	}
	t := v.Type()
	switch {
	case t == durationType:
		return leaf(n, func(s string) error {
			dur, err := config.ParseDuration(s)
			if err == nil {
				v.SetInt(int64(dur))
			}
			return err
		})
	case t.Kind() == reflect.Pointer:
		return d.setPointer(v, n, top)
	case t.Kind() == reflect.Struct:
		return d.setStruct(v, n, top)
	case t.Kind() == reflect.Slice:
		return d.setSlice(v, n)
	case t.Kind() == reflect.Map:
		return d.setMap(v, n)
	case t.Kind() == reflect.Interface:
		v.Set(reflect.ValueOf(Generic(n)))
		return nil
	}
	return leaf(n, func(s string) error { return SetScalar(v, s) })
}

// errAt is one Error per key at or under n.
func errAt(n *Node, err error) []Error {
	if n.Key != "" && !n.HasValue {
		return []Error{{Node: n, Key: n.Key, Err: err}}
	}
	var out []Error
	for _, l := range n.Leaves() {
		if l.Key != "" {
			out = append(out, Error{Node: l, Key: l.Key, Err: err})
		}
	}
	return out
}

// leaf checks that n is a value without sub-keys and applies f to it.
func leaf(n *Node, f func(string) error) []Error {
	var errs []Error
	for _, c := range n.Children {
		for _, l := range c.Leaves() {
			if l.Key != "" {
				errs = append(errs, Error{Node: l, Key: l.Key, Err: fmt.Errorf("%q takes a value, not sub-keys", n.Name)})
			}
		}
	}
	if n.HasValue {
		if err := f(n.Value); err != nil {
			errs = append(errs, Error{Node: n, Key: n.Key, Err: err})
		}
	}
	return errs
}

func (d Decoder) setPointer(v reflect.Value, n *Node, top bool) []Error {
	et := v.Type().Elem()
	if et.Kind() == reflect.Struct && n.HasValue {
		// An empty block declared with a boolean: tls=true, compress=true.
		b, err := ParseBool(n.Value)
		if err != nil {
			return []Error{{n, n.Key, fmt.Errorf("%q is a block: set its fields, or true to enable it with defaults (%w)", n.Name, err)}}
		}
		if !b {
			if len(n.Children) > 0 {
				return []Error{{n, n.Key, fmt.Errorf("%q is false but has sub-keys", n.Name)}}
			}
			v.SetZero()
			return nil
		}
		if v.IsNil() {
			v.Set(reflect.New(et))
		}
		if len(n.Children) == 0 {
			return nil
		}
		stripped := *n
		stripped.HasValue = false
		return d.Set(v.Elem(), &stripped, top)
	}
	if v.IsNil() {
		v.Set(reflect.New(et))
	}
	return d.Set(v.Elem(), n, top)
}

// Field finds the field of struct v whose JSON name is name
// (case-insensitively), looking through embedded structs.
func Field(v reflect.Value, name string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := JSONName(f)
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == f.Name && f.Type.Kind() == reflect.Struct {
			if fv, ok := Field(v.Field(i), name); ok {
				return fv, true
			}
			continue
		}
		if strings.EqualFold(tag, name) {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// JSONName is f's name in the configuration: its JSON name, else the Go
// name; "-" for a field JSON leaves out.
func JSONName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

func (d Decoder) setStruct(v reflect.Value, n *Node, top bool) []Error {
	var errs []Error
	if n.HasValue {
		errs = append(errs, Error{n, n.Key, fmt.Errorf("%q is a block: set its fields, not a value", n.Name)})
	}
	for _, c := range n.Children {
		fv, ok := Field(v, c.Name)
		if !ok {
			e := &UnknownFieldError{Name: c.Name, Suggestion: suggest(v.Type(), c.Name), dotted: top && len(c.Children) > 0}
			if d.Whole {
				errs = append(errs, errAt(c, e)...)
			} else {
				for _, l := range c.Leaves() {
					if l.Key != "" {
						errs = append(errs, Error{l, l.Key, e})
					}
				}
			}
			continue
		}
		errs = append(errs, d.Set(fv, c, false)...)
	}
	return errs
}

func (d Decoder) setSlice(v reflect.Value, n *Node) []Error {
	if d.Layer && v.Len() > 0 {
		v.SetZero() // a later layer's list replaces the earlier one
	}
	if n.HasValue {
		if len(n.Children) > 0 {
			return []Error{{n, n.Key, fmt.Errorf("%q is given both as a list and with indexes", n.Name)}}
		}
		et := v.Type().Elem()
		if et.Kind() == reflect.Struct || et.Kind() == reflect.Pointer {
			return []Error{{n, n.Key, fmt.Errorf("%q is an array of blocks: use %s[0].<field>", n.Name, n.Name)}}
		}
		items := reflect.MakeSlice(v.Type(), 0, 0)
		for item := range strings.SplitSeq(n.Value, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			ev := reflect.New(et).Elem()
			if err := SetScalar(ev, item); err != nil {
				return []Error{{n, n.Key, err}}
			}
			items = reflect.Append(items, ev)
		}
		if items.Len() > 0 {
			v.Set(items)
		}
		return nil
	}
	var errs []Error
	var elems []Elem
	for _, c := range n.Children {
		i, err := strconv.Atoi(c.Name)
		if err != nil || !IsIndex(c.Name) {
			for _, l := range c.Leaves() {
				if l.Key != "" {
					errs = append(errs, Error{l, l.Key, fmt.Errorf("%q is an array: want an index such as %s[0], got %q", n.Name, n.Name, c.Name)})
				}
			}
			continue
		}
		elems = append(elems, Elem{i, c})
	}
	return append(errs, d.SetElems(v, elems)...)
}

// Elem is one indexed node of an array.
type Elem struct {
	Index int
	N     *Node
}

// SetElems decodes indexed nodes into slice v. Indexes are ordered by
// number and compacted: [0] and [5] make a two-element slice; an index
// already in v decodes over that element.
func (d Decoder) SetElems(v reflect.Value, elems []Elem) []Error {
	slices.SortStableFunc(elems, func(a, b Elem) int { return a.Index - b.Index })
	var errs []Error
	pos := map[int]int{}
	for i := range v.Len() {
		pos[i] = i
	}
	for _, e := range elems {
		p, ok := pos[e.Index]
		if !ok {
			p = v.Len()
			v.Set(reflect.Append(v, reflect.New(v.Type().Elem()).Elem()))
			pos[e.Index] = p
		}
		errs = append(errs, d.Set(v.Index(p), e.N, false)...)
	}
	return errs
}

func (d Decoder) setMap(v reflect.Value, n *Node) []Error {
	var errs []Error
	if n.HasValue {
		errs = append(errs, Error{n, n.Key, fmt.Errorf("%q is a map: set %s.<name>=<value>", n.Name, n.Name)})
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	for _, c := range n.Children {
		key := reflect.ValueOf(c.Name).Convert(v.Type().Key())
		ev := reflect.New(v.Type().Elem()).Elem()
		if old := v.MapIndex(key); old.IsValid() {
			ev.Set(old) // an earlier layer's entry: decode over it
		}
		ferrs := d.Set(ev, c, false)
		errs = append(errs, ferrs...)
		if len(ferrs) == 0 {
			v.SetMapIndex(key, ev)
		}
	}
	return errs
}
