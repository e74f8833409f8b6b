package middleware

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// newStripPrefixRegex strips the text matched by the first of c.Regex that
// matches at the start of the path, and sets X-Forwarded-Prefix to it.
// Source: https://doc.traefik.io/traefik/middlewares/http/stripprefixregex/
func newStripPrefixRegex(c *config.StripPrefixRegex) (Middleware, error) {
	if len(c.Regex) == 0 {
		return nil, &fieldError{Field: "regex", Err: errors.New("empty")}
	}
	res := make([]*regexp.Regexp, len(c.Regex))
	for i, s := range c.Regex {
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, errField(fmt.Sprintf("regex[%d]", i), "bad regexp %q: %w", s, err)
		}
		res[i] = re
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		})
	}, nil
}
