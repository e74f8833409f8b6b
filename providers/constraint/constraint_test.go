package constraint

import (
	"regexp"
	"strings"
	"testing"
)

var fns = map[string]Func[map[string]string]{
	"Label": {Args: 2, Build: func(a []string) (func(map[string]string) bool, error) {
		return func(m map[string]string) bool { v, ok := m[a[0]]; return ok && v == a[1] }, nil
	}},
	"LabelRegex": {Args: 2, Build: func(a []string) (func(map[string]string) bool, error) {
		re, err := regexp.Compile(a[1])
		if err != nil {
			return nil, err
		}
		return func(m map[string]string) bool { v, ok := m[a[0]]; return ok && re.MatchString(v) }, nil
	}},
}

func TestCompile(t *testing.T) {
	in := map[string]string{"env": "prod", "team": "web"}
	tests := []struct {
		expr string
		want bool
	}{
		{"", true},
		{"Label(`env`, `prod`)", true},
		{"!Label(`env`, `prod`)", false},
		{"Label(`team`, `web`) || Label(`env`, `dev`) && Label(`x`, `y`)", true},
		{"(Label(`team`, `web`) || Label(`env`, `dev`)) && Label(`x`, `y`)", false},
		{"LabelRegex(`env`, `^pr`)", true},
	}
	for _, tt := range tests {
		m, err := Compile(tt.expr, fns)
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		if got := m(in); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.expr, got, tt.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"Label(`env`)", "Label takes 2 arguments, got 1"},
		{"Tag(`x`)", `unknown function "Tag": want Label or LabelRegex`},
		{"LabelRegex(`env`, `(`)", "LabelRegex: error parsing regexp"},
		{"Label(`env`, `prod`", "offset"},
		{"Label(`a`, `b`) &&", "offset"},
	}
	for _, tt := range tests {
		_, err := Compile(tt.expr, fns)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "constraints ") {
			t.Errorf("%s: got %v, want an error containing %q", tt.expr, err, tt.want)
		}
	}
}
