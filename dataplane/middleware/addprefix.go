package middleware

import (
	"net/http"

	"github.com/gantry-proxy/gantry/config"
)

// newAddPrefix prepends c.Prefix (a leading "/" is added when missing) to
// the path and, when the request has one, to the raw path.
// Source: https://doc.traefik.io/traefik/middlewares/http/addprefix/
func newAddPrefix(c *config.AddPrefix) (Middleware, error) {
	if c.Prefix == "" {
		return nil, errEmpty("prefix")
	}
	prefix := ensureLeadingSlash(c.Prefix)
	return handle(func(next http.Handler, w http.ResponseWriter, r *http.Request) {
		raw := r.URL.RawPath
		if raw != "" {
			raw = prefix + raw
		}
		next.ServeHTTP(w, withPath(r, prefix+r.URL.Path, raw))
	}), nil
}
