package middleware

import (
	"net/http"
	"net/url"

	"github.com/gantry-proxy/gantry/config"
)

// newRedirectRegex matches c.Regex against the full URL the client used
// ("scheme://host[:port]/path?query", scheme as in requestScheme) and,
// when it matches and the replacement ($1, ${name}) differs, redirects
// there (see redirect for the status codes).
// Source: https://doc.traefik.io/traefik/middlewares/http/redirectregex/
func newRedirectRegex(c *config.RedirectRegex) (Middleware, error) {
	re, err := requiredRegexp("regex", c.Regex)
	if err != nil {
		return nil, err
	}
	if c.Replacement == "" {
		return nil, errEmpty("replacement")
	}
	repl, permanent := c.Replacement, c.Permanent
	return handle(func(next http.Handler, w http.ResponseWriter, r *http.Request) {
		old := requestScheme(r) + "://" + r.Host + requestURI(r)
		if !re.MatchString(old) {
			next.ServeHTTP(w, r)
			return
		}
		to := re.ReplaceAllString(old, repl)
		if to == old {
			next.ServeHTTP(w, r)
			return
		}
		if _, err := url.Parse(to); err != nil {
			http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
			return
		}
		redirect(w, r, to, permanent)
	}), nil
}
