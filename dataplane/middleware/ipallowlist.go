package middleware

import (
	"net/http"

	"github.com/gantry-proxy/gantry/config"
)

// newIPAllowList answers c.RejectStatusCode (default 403) to clients whose
// IP (chosen by c.IPStrategy, see ipStrategy) is not in c.SourceRange.
// A request whose client IP cannot be determined is rejected.
// Source: https://doc.traefik.io/traefik/middlewares/http/ipallowlist/
func newIPAllowList(c *config.IPAllowList) (Middleware, error) {
	ranges, err := parseRequired("sourceRange", c.SourceRange, config.ParseIPRange)
	if err != nil {
		return nil, err
	}
	strat, err := newIPStrategy(c.IPStrategy, "ipStrategy")
	if err != nil {
		return nil, err
	}
	code := c.RejectStatusCode
	switch {
	case code == 0:
		code = http.StatusForbidden
	case code < 100 || code > 599:
		return nil, errField("rejectStatusCode", "%d is not an HTTP status", code)
	}
	body := http.StatusText(code)
	return handle(func(next http.Handler, w http.ResponseWriter, r *http.Request) {
		a := strat.clientIP(r)
		if !a.IsValid() || !inRanges(a, ranges) {
			http.Error(w, body, code)
			return
		}
		next.ServeHTTP(w, r)
	}), nil
}
