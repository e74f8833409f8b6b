package middleware

import (
	"errors"
	"net/http"

	"github.com/gantry-proxy/gantry/config"
)

// newAddPrefix prepends c.Prefix (a leading "/" is added when missing) to
// the path and, when the request has one, to the raw path.
// Source: https://doc.traefik.io/traefik/middlewares/http/addprefix/
func newAddPrefix(c *config.AddPrefix) (Middleware, error) {
	if c.Prefix == "" {
		return nil, &fieldError{Field: "prefix", Err: errors.New("empty")}
	}
	prefix := ensureLeadingSlash(c.Prefix)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			raw := r.URL.RawPath
			if raw != "" {
				raw = prefix + raw
			}
			next.ServeHTTP(w, withPath(r, prefix+r.URL.Path, raw))
		})
	}, nil
}
