package middleware

import (
	"net/http"
	"net/url"

	"github.com/gantry-proxy/gantry/config"
)

// newReplacePath replaces the whole path with c.Path (given in escaped
// form) and keeps the original escaped path in X-Replaced-Path.
// Source: https://doc.traefik.io/traefik/middlewares/http/replacepath/
func newReplacePath(c *config.ReplacePath) (Middleware, error) {
	if c.Path == "" {
		return nil, errEmpty("path")
	}
	path, err := url.PathUnescape(c.Path)
	if err != nil {
		return nil, errField("path", "%q does not unescape: %w", c.Path, err)
	}
	raw := c.Path
	if raw == (&url.URL{Path: path}).EscapedPath() {
		raw = ""
	}
	return handle(func(next http.Handler, w http.ResponseWriter, r *http.Request) {
		r.Header.Set(headerReplacedPath, r.URL.EscapedPath())
		next.ServeHTTP(w, withPath(r, path, raw))
	}), nil
}
