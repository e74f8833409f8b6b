package file

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/template"
)

// funcs are the template functions available in configuration files: a
// small, dependency-free subset of sprig's (which Traefik offers), with
// sprig's argument order so that Traefik templates render unchanged.
//
//	env "NAME"                  value of an environment variable ("" if unset)
//	default "x" v               v, or "x" when v is empty ("", 0, nil, false, empty list)
//	split ","  "a,b"            ["a" "b"] (sprig's splitList; range over it)
//	splitList ","  "a,b"        the same
//	join "," list               "a,b"
//	trim " a "                  "a"
//	trimPrefix / trimSuffix     strings.TrimPrefix / TrimSuffix, prefix first
//	upper, lower                case changes
//	replace "old" "new" s       strings.ReplaceAll
//	contains / hasPrefix / hasSuffix   substring tests, needle first
//	list a b c                  a list of its arguments
//	until n                     [0 1 … n-1]
//	seq a b                     [a … b] inclusive
//	add a b, sub a b            integer arithmetic
//	atoi s                      integer value of s (error if not a number)
//	quote s                     s as a double-quoted string
var funcs = template.FuncMap{
	"env":        os.Getenv,
	"default":    dflt,
	"split":      splitList,
	"splitList":  splitList,
	"join":       join,
	"trim":       strings.TrimSpace,
	"trimPrefix": func(p, s string) string { return strings.TrimPrefix(s, p) },
	"trimSuffix": func(p, s string) string { return strings.TrimSuffix(s, p) },
	"upper":      strings.ToUpper,
	"lower":      strings.ToLower,
	"replace":    func(old, new, s string) string { return strings.ReplaceAll(s, old, new) },
	"contains":   func(sub, s string) bool { return strings.Contains(s, sub) },
	"hasPrefix":  func(p, s string) bool { return strings.HasPrefix(s, p) },
	"hasSuffix":  func(p, s string) bool { return strings.HasSuffix(s, p) },
	"list":       func(v ...any) []any { return v },
	"until":      func(n int) []int { return seq(0, n-1) },
	"seq":        seq,
	"add":        func(a, b int) int { return a + b },
	"sub":        func(a, b int) int { return a - b },
	"atoi":       strconv.Atoi,
	"quote":      strconv.Quote,
}

func dflt(d, v any) any {
	switch x := v.(type) {
	case nil:
		return d
	case string:
		if x == "" {
			return d
		}
	case bool:
		if !x {
			return d
		}
	case int:
		if x == 0 {
			return d
		}
	case []string:
		if len(x) == 0 {
			return d
		}
	case []any:
		if len(x) == 0 {
			return d
		}
	}
	return v
}

func splitList(sep, s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, sep)
}

func join(sep string, v any) (string, error) {
	switch l := v.(type) {
	case []string:
		return strings.Join(l, sep), nil
	case []any:
		parts := make([]string, len(l))
		for i, e := range l {
			parts[i] = fmt.Sprint(e)
		}
		return strings.Join(parts, sep), nil
	case []int:
		parts := make([]string, len(l))
		for i, e := range l {
			parts[i] = strconv.Itoa(e)
		}
		return strings.Join(parts, sep), nil
	}
	return "", fmt.Errorf("join: cannot join %T", v)
}

// maxSeq bounds seq and until so a typo cannot allocate without limit.
const maxSeq = 100_000

func seq(a, b int) []int {
	if b < a {
		return nil
	}
	n := min(b-a+1, maxSeq)
	out := make([]int, n)
	for i := range out {
		out[i] = a + i
	}
	return out
}

// render executes data as a template named name. Errors carry the
// template's "name:line[:col]" location.
func render(name string, data []byte) ([]byte, error) {
	t, err := template.New(name).Funcs(funcs).Option("missingkey=error").Parse(string(data))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, nil); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
