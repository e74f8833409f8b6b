package consul

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"

	"github.com/gantry-proxy/gantry/providers"
)

// DefaultRule is the default router rule template of the catalog provider
// (Traefik's default).
const DefaultRule = "Host(`{{ normalize .Name }}`)"

// ruleModel is the data a defaultRule template sees: .Name is the Consul
// service name (not normalized) and .Labels the instance's tags parsed as
// key=value. Source: https://doc.traefik.io/traefik/providers/consul-catalog/#defaultrule
type ruleModel struct {
	Name   string
	Labels map[string]string
}

// parseRuleTemplate compiles a defaultRule: a Go text/template with sprig's
// functions plus normalize.
func parseRuleTemplate(text string) (*template.Template, error) {
	funcs := sprig.TxtFuncMap()
	funcs["normalize"] = providers.Normalize
	t, err := template.New("defaultRule").Funcs(funcs).Option("missingkey=zero").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("defaultRule %q: %w", text, err)
	}
	return t, nil
}

// renderRule executes t for m; an empty result is an error.
func renderRule(t *template.Template, m ruleModel) (string, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, m); err != nil {
		return "", fmt.Errorf("defaultRule: %w", err)
	}
	r := strings.TrimSpace(b.String())
	if r == "" {
		return "", fmt.Errorf("defaultRule rendered an empty rule")
	}
	return r, nil
}
