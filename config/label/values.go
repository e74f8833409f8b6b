package label

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// generic turns a subtree into strings and map[string]any, for fields typed
// any (plugin options, TCP and UDP sections).
func generic(n *node) any {
	if len(n.children) == 0 {
		return n.value
	}
	m := make(map[string]any, len(n.children))
	for _, c := range n.children {
		m[c.name] = generic(c)
	}
	return m
}

func setScalar(v reflect.Value, s string) error {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := parseBool(s)
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

// parseBool is strconv.ParseBool, as in Traefik's decoder (paerser): 1, t,
// T, TRUE, true, True, 0, f, F, FALSE, false, False, nothing else and no
// trimming (case 036: "true\"" and "yes" are errors).
func parseBool(s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("invalid boolean %q: want true or false (or 1, t, T, TRUE, True, 0, f, F, FALSE, False)", s)
	}
	return b, nil
}
