package middleware

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// Middleware wraps a handler. Built once per configuration generation,
// never per request.
type Middleware func(http.Handler) http.Handler

// Resolver gives a middleware access to the other objects of its generation.
// dataplane's Generation implements it. Names are qualified ("auth@file").
type Resolver interface {
	// Middleware builds (or returns the cached) named middleware. It returns
	// an error for an unknown name or a reference cycle (chains that loop).
	Middleware(ctx context.Context, name string) (Middleware, error)
	// Service returns the handler of the named service (for errors pages).
	Service(ctx context.Context, name string) (http.Handler, error)
}

// New builds the middleware called name (qualified) from its configuration:
// a switch on the union's set field. It returns an error naming the field
// and what is wrong for bad options (bad regexp, missing usersFile, unknown
// service, …); the caller disables the routers that use it.
func New(ctx context.Context, name string, c *config.Middleware, res Resolver) (Middleware, error) {
	kinds := config.MiddlewareKinds(c)
	if len(kinds) != 1 {
		return nil, fmt.Errorf("middleware %s: want exactly one kind, got %d (%s)", name, len(kinds), strings.Join(kinds, ", "))
	}
	switch {
	default:
		return nil, fmt.Errorf("middleware %s: kind %s is not supported", name, kinds[0])
	}
}
