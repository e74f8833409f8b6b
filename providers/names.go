package providers

import (
	"strings"
	"unicode"
)

// Normalize replaces every run of characters other than letters and
// digits (Unicode letters and numbers) with a single "-" and trims them at
// both ends ("my_api.v2" → "my-api-v2", "default/my.mw" → "default-my-mw"):
// the names providers derive from containers, Consul services and
// Kubernetes objects, as Traefik's provider.Normalize makes them.
func Normalize(name string) string {
	return strings.Join(strings.FieldsFunc(name, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	}), "-")
}
