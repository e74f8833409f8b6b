package middleware

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"

	"github.com/gantry-proxy/gantry/config"
)

// newIPAllowList answers c.RejectStatusCode (default 403) to clients whose
// IP (chosen by c.IPStrategy, see ipStrategy) is not in c.SourceRange.
// A request whose client IP cannot be determined is rejected.
// Source: https://doc.traefik.io/traefik/middlewares/http/ipallowlist/
func newIPAllowList(c *config.IPAllowList) (Middleware, error) {
	if len(c.SourceRange) == 0 {
		return nil, &fieldError{Field: "sourceRange", Err: errors.New("empty")}
	}
	ranges := make([]netip.Prefix, len(c.SourceRange))
	for i, s := range c.SourceRange {
		p, err := parseRange(s)
		if err != nil {
			return nil, errField(fmt.Sprintf("sourceRange[%d]", i), "%w", err)
		}
		ranges[i] = p
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
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a := strat.clientIP(r)
			if !a.IsValid() || !inRanges(a, ranges) {
				http.Error(w, body, code)
				return
			}
			next.ServeHTTP(w, r)
		})
	}, nil
}
