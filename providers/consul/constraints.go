package consul

import (
	"regexp"
	"slices"

	cons "github.com/gantry-proxy/gantry/providers/constraint"
)

// constraint is a compiled providers.consulCatalog.constraints expression:
// a boolean combination of Tag(`t`) (some tag equals t exactly) and
// TagRegex(`re`) (some tag matches the Go regexp re, unanchored), with
// &&, ||, ! and parentheses (grammar: package config/rule).
// Source: https://doc.traefik.io/traefik/providers/consul-catalog/#constraints
//
// A constraint is immutable and safe for concurrent use.
type constraint = cons.Matcher[[]string]

// tagFuncs are the functions of a Consul Catalog constraint.
var tagFuncs = map[string]cons.Func[[]string]{
	"Tag": {Args: 1, Build: func(a []string) (func([]string) bool, error) {
		return func(tags []string) bool { return slices.Contains(tags, a[0]) }, nil
	}},
	"TagRegex": {Args: 1, Build: func(a []string) (func([]string) bool, error) {
		re, err := regexp.Compile(a[0])
		if err != nil {
			return nil, err
		}
		return func(tags []string) bool { return slices.ContainsFunc(tags, re.MatchString) }, nil
	}},
}

// parseConstraint compiles expr. The empty expression keeps everything.
// Errors name the offset or the function and what is wrong; a bad regexp
// is an error here (Traefik silently treats it as "no match").
func parseConstraint(expr string) (constraint, error) {
	return cons.Compile(expr, tagFuncs)
}
