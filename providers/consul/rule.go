package consul

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"
	"unicode"

	"github.com/Masterminds/sprig/v3"
)

// DefaultRule is the default router rule template of the catalog provider
// (Traefik's default).
const DefaultRule = "Host(`{{ normalize .Name }}`)"

// Normalize replaces every run of characters other than letters and digits
// with a single "-" and trims them at both ends ("my_api.v2" → "my-api-v2"),
// as Traefik's provider.Normalize does.
func Normalize(name string) string {
	return strings.Join(strings.FieldsFunc(name, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	}), "-")
}

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
	funcs["normalize"] = Normalize
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
