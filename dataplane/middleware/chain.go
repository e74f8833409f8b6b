package middleware

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/gantry-proxy/gantry/config"
)

// newChain applies the named middlewares in order, the first outermost.
// Names are resolved (and loops detected) by res; a name may be qualified
// with another provider ("auth@file", case 011).
// Source: https://doc.traefik.io/traefik/middlewares/http/chain/
func newChain(ctx context.Context, c *config.Chain, res Resolver) (Middleware, error) {
	if len(c.Middlewares) == 0 {
		return nil, errEmpty("middlewares")
	}
	if res == nil {
		return nil, errors.New("no resolver to look up middlewares")
	}
	ms := make([]Middleware, len(c.Middlewares))
	for i, n := range c.Middlewares {
		m, err := res.Middleware(ctx, n)
		if err != nil {
			return nil, &fieldError{Field: fmt.Sprintf("middlewares[%d]", i), Err: fmt.Errorf("%q: %w", n, err)}
		}
		ms[i] = m
	}
	return func(next http.Handler) http.Handler { return Chain(next, ms...) }, nil
}
