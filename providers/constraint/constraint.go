// Package constraint compiles a provider's constraints expression (Docker's
// Label/LabelRegex, Consul Catalog's Tag/TagRegex) with the rule grammar of
// package config/rule: function calls combined with !, && (binding tighter)
// and ||, and parentheses, values in backticks or double quotes.
// Source: https://doc.traefik.io/traefik/providers/docker/#constraints and
// https://doc.traefik.io/traefik/providers/consul-catalog/#constraints
//
// A compiled Matcher is immutable and safe for concurrent use.
package constraint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config/rule"
)

// Matcher reports whether an input (a container's labels, a service's
// tags) satisfies the expression.
type Matcher[T any] func(T) bool

// Func is one function of the expression language: it takes exactly Args
// arguments, and Build turns them into a test (or an error naming what is
// wrong, such as a bad regular expression).
type Func[T any] struct {
	Args  int
	Build func(args []string) (func(T) bool, error)
}

// Compile parses expr and binds its calls to fns. The empty expression
// matches everything. Errors read `constraints "<expr>": <reason>`, naming
// the offset for syntax errors, and the function for an unknown name, a
// wrong number of arguments or a bad argument.
func Compile[T any](expr string, fns map[string]Func[T]) (Matcher[T], error) {
	if strings.TrimSpace(expr) == "" {
		return func(T) bool { return true }, nil
	}
	fail := func(err error) (Matcher[T], error) {
		return nil, fmt.Errorf("constraints %q: %w", expr, err)
	}
	tree, err := rule.Parse(expr)
	if err != nil {
		return fail(err)
	}
	tests := map[*rule.Tree]func(T) bool{}
	err = tree.Walk(func(call *rule.Tree) error {
		f, ok := fns[call.Name]
		if !ok {
			names := make([]string, 0, len(fns))
			for n := range fns {
				names = append(names, n)
			}
			slices.Sort(names)
			return fmt.Errorf("unknown function %q: want %s", call.Name, strings.Join(names, " or "))
		}
		if len(call.Args) != f.Args {
			return fmt.Errorf("%s takes %d argument%s, got %d", call.Name, f.Args, plural(f.Args), len(call.Args))
		}
		test, err := f.Build(call.Args)
		if err != nil {
			return fmt.Errorf("%s: %w", call.Name, err)
		}
		tests[call] = test
		return nil
	})
	if err != nil {
		return fail(err)
	}
	return func(in T) bool {
		return tree.Eval(func(call *rule.Tree) bool { return tests[call](in) })
	}, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
