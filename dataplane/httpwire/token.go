package httpwire

import "strings"

// HasToken reports whether the values of a comma-separated list field
// (RFC 9110 §5.6.1: Connection, Upgrade, Accept, ...) hold token,
// compared case-insensitively, ignoring whitespace around each element.
// Pass the field's values as stored in an http.Header (h["Connection"]).
// It does not allocate.
func HasToken(values []string, token string) bool {
	for _, v := range values {
		for v != "" {
			var item string
			item, v, _ = strings.Cut(v, ",")
			if strings.EqualFold(strings.TrimSpace(item), token) {
				return true
			}
		}
	}
	return false
}
