package docker

import (
	"regexp"

	"github.com/gantry-proxy/gantry/providers/constraint"
)

// matcher reports whether a container's labels satisfy a constraint.
type matcher = constraint.Matcher[map[string]string]

// labelFuncs are the functions of a Docker constraint:
// Label(`key`, `value`) holds when the label key has exactly value;
// LabelRegex(`key`, `re`) when the label key exists and its value matches
// the Go regular expression re (unanchored).
var labelFuncs = map[string]constraint.Func[map[string]string]{
	"Label": {Args: 2, Build: func(a []string) (func(map[string]string) bool, error) {
		key, val := a[0], a[1]
		return func(m map[string]string) bool { v, ok := m[key]; return ok && v == val }, nil
	}},
	"LabelRegex": {Args: 2, Build: func(a []string) (func(map[string]string) bool, error) {
		key := a[0]
		re, err := regexp.Compile(a[1])
		if err != nil {
			return nil, err
		}
		return func(m map[string]string) bool { v, ok := m[key]; return ok && re.MatchString(v) }, nil
	}},
}

// parseConstraints compiles a constraints expression (Traefik's
// providers.docker.constraints): Label and LabelRegex combined with !, &&
// and || (in that precedence) and parentheses (grammar: package
// config/rule). An empty expression matches every container.
// Source: https://doc.traefik.io/traefik/providers/docker/#constraints
//
// Errors name the offset or the function and what is wrong.
func parseConstraints(expr string) (matcher, error) {
	return constraint.Compile(expr, labelFuncs)
}
