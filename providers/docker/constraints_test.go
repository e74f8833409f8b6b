package docker

import (
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
)

func TestConstraints(t *testing.T) {
	labels := map[string]string{"env": "prod", "team": "web", "tier": "frontend-2"}
	tests := []struct {
		expr string
		want bool
	}{
		{"", true},
		{"Label(`env`, `prod`)", true},
		{`Label("env", "prod")`, true},
		{"Label(`env`, `dev`)", false},
		{"Label(`missing`, ``)", false},
		{"!Label(`env`, `dev`)", true},
		{"!!Label(`env`, `prod`)", true},
		{"LabelRegex(`tier`, `^frontend-[0-9]+$`)", true},
		{"LabelRegex(`tier`, `backend`)", false},
		{"LabelRegex(`missing`, `.*`)", false},
		{"Label(`env`, `dev`) || Label(`team`, `web`)", true},
		{"Label(`env`, `prod`) && Label(`team`, `db`)", false},
		// && binds tighter than ||.
		{"Label(`team`, `web`) || Label(`env`, `dev`) && Label(`x`, `y`)", true},
		{"(Label(`team`, `web`) || Label(`env`, `dev`)) && Label(`x`, `y`)", false},
		{"  Label( `env` ,`prod` )  ", true},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			m, err := parseConstraints(tt.expr)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if got := m(labels); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestConstraintsErrors(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"Label(`env`)", "Label takes 2 arguments, got 1"},
		{"Tag(`x`, `y`)", `unknown function "Tag"`},
		{"Label(`env`, `prod`", "missing ')'"},
		{"Label(`env`, `prod`) &&", "offset 23: unexpected end of expression"},
		{"Label(`env`, `prod`) Label(`a`, `b`)", "unexpected"},
		{"LabelRegex(`env`, `(`)", "LabelRegex"},
		{"Label(env, prod)", "must be quoted"},
		{"(Label(`a`, `b`)", "expected ')' to close the '('"},
		{"Label(`a`, `b)", "unterminated string"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			_, err := parseConstraints(tt.expr)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts static.Docker
		want string
	}{
		{"defaultRule", static.Docker{DefaultRule: "Host(`{{ .Name `)"}, "docker: defaultRule"},
		{"constraints", static.Docker{Constraints: "Label(`a`)"}, "docker: constraints"},
		{"prefix with dot", static.Docker{Prefixes: []string{"traefik."}}, "docker: prefixes"},
		{"tls ca", static.Docker{TLS: &config.ClientTLS{CA: "/nonexistent/ca.pem"}}, "docker: tls.ca"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.opts, nil); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("got %v, want an error starting with %q", err, tt.want)
			}
		})
	}
}
