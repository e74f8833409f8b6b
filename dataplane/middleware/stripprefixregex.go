package middleware

import (
	"net/http"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// newStripPrefixRegex strips the text matched by the first of c.Regex that
// matches at the start of the path, and sets X-Forwarded-Prefix to it.
// Source: https://doc.traefik.io/traefik/middlewares/http/stripprefixregex/
func newStripPrefixRegex(c *config.StripPrefixRegex) (Middleware, error) {
	res, err := parseRequired("regex", c.Regex, compileRegexp)
	if err != nil {
		return nil, err
	}
	return handle(func(next http.Handler, w http.ResponseWriter, r *http.Request) {
		for _, re := range res {
			loc := re.FindStringIndex(r.URL.Path)
			if loc == nil || loc[0] != 0 {
				continue
			}
			prefix := r.URL.Path[:loc[1]]
			if !strings.HasPrefix(r.URL.Path, prefix) {
				continue
			}
			r = stripPath(r, prefix, []string{prefix})
			if climbs(r.URL.EscapedPath()) {
				badRewrite(w)
				return
			}
			break
		}
		next.ServeHTTP(w, r)
	}), nil
}
