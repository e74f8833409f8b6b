package node

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Generic turns a subtree into strings and map[string]any, for fields
// typed any (plugin options).
func Generic(n *Node) any {
	if len(n.Children) == 0 {
		return n.Value
	}
	m := make(map[string]any, len(n.Children))
	for _, c := range n.Children {
		m[c.Name] = Generic(c)
	}
	return m
}

// SetScalar parses s into v, a string, boolean (ParseBool), decimal
// integer or number.
func SetScalar(v reflect.Value, s string) error {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := ParseBool(s)
		if err != nil {
			return err
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(strings.TrimSpace(s), 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("invalid integer %q: %w", s, numError(err))
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u, err := strconv.ParseUint(strings.TrimSpace(s), 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("invalid unsigned integer %q: %w", s, numError(err))
		}
		v.SetUint(u)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), v.Type().Bits())
		if err != nil {
			return fmt.Errorf("invalid number %q: %w", s, numError(err))
		}
		v.SetFloat(f)
	default:
		return fmt.Errorf("cannot decode a value into %s", v.Type())
	}
	return nil
}

func numError(err error) error {
	if ne, ok := errors.AsType[*strconv.NumError](err); ok {
		return ne.Err
	}
	return err
}

// ParseBool is strconv.ParseBool, as in Traefik's decoder (paerser): 1, t,
// T, TRUE, true, True, 0, f, F, FALSE, false, False, nothing else and no
// trimming (case 036: "true\"" and "yes" are errors).
func ParseBool(s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("invalid boolean %q: want true or false (or 1, t, T, TRUE, True, 0, f, F, FALSE, False)", s)
	}
	return b, nil
}

// suggest returns the JSON name of struct t's field closest to name, at
// most two edits away (case-insensitively), or "".
func suggest(t reflect.Type, name string) string {
	best, bestD := "", 3
	for _, f := range Fields(t) {
		if d := distance(strings.ToLower(f), strings.ToLower(name)); d < bestD {
			best, bestD = f, d
		}
	}
	return best
}

// Fields lists the configuration names of struct t's fields (embedded
// structs' fields included), in declaration order.
func Fields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		name := JSONName(f)
		switch {
		case !f.IsExported() || name == "-":
		case f.Anonymous && name == f.Name && f.Type.Kind() == reflect.Struct:
			out = append(out, Fields(f.Type)...)
		default:
			out = append(out, name)
		}
	}
	return out
}

// distance is the Levenshtein distance between a and b (bytes).
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
