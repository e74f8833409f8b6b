package middleware

import (
	"errors"
	"net/http"
	"net/url"
	"regexp"

	"github.com/gantry-proxy/gantry/config"
)

// newReplacePathRegex rewrites the escaped path with c.Regex and
// c.Replacement ($1, ${name} expand) when the regexp matches, keeping the
// original in X-Replaced-Path.
// Source: https://doc.traefik.io/traefik/middlewares/http/replacepathregex/
func newReplacePathRegex(c *config.ReplacePathRegex) (Middleware, error) {
	if c.Regex == "" {
		return nil, &fieldError{Field: "regex", Err: errors.New("empty")}
	}
	re, err := regexp.Compile(c.Regex)
	if err != nil {
		return nil, errField("regex", "bad regexp %q: %w", c.Regex, err)
	}
	repl := c.Replacement
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		})
	}, nil
}
