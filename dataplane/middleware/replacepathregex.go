package middleware

import (
	"net/http"
	"net/url"

	"github.com/gantry-proxy/gantry/config"
)

// newReplacePathRegex rewrites the escaped path with c.Regex and
// c.Replacement ($1, ${name} expand) when the regexp matches, keeping the
// original in X-Replaced-Path.
// Source: https://doc.traefik.io/traefik/middlewares/http/replacepathregex/
func newReplacePathRegex(c *config.ReplacePathRegex) (Middleware, error) {
	re, err := requiredRegexp("regex", c.Regex)
	if err != nil {
		return nil, err
	}
	repl := c.Replacement
	return handle(func(next http.Handler, w http.ResponseWriter, r *http.Request) {
		cur := r.URL.EscapedPath()
		if !re.MatchString(cur) {
			next.ServeHTTP(w, r)
			return
		}
		raw := re.ReplaceAllString(cur, repl)
		path, err := url.PathUnescape(raw)
		if err != nil || climbs(raw) {
			http.Error(w, http.StatusText(http.StatusBadRequest), http.StatusBadRequest)
			return
		}
		r.Header.Set(headerReplacedPath, cur)
		if raw == (&url.URL{Path: path}).EscapedPath() {
			raw = ""
		}
		next.ServeHTTP(w, withPath(r, path, raw))
	}), nil
}
