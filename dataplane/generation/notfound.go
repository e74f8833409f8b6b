package generation

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/middleware"
)

// BuildNotFound implements router.Builder from
// Options.NotFound (entryPoints.<ep>.http.notFound): the errors
// middleware, catching the bare 404, with the page's status rewritten to
// the configured one. (nil, nil) when the entrypoint has none. Errors name
// the option and the service (unknown, unqualified, broken).
func (g *Generation) BuildNotFound(ctx context.Context, entryPoint string) (http.Handler, error) {
	nf := g.opts.NotFound[entryPoint]
	if nf == nil {
		return nil, nil
	}
	if err := CheckNotFound(nf); err != nil {
		return nil, err
	}
	ep := &config.ErrorPage{Status: []string{"404"}, Service: nf.Service, Query: nf.Query}
	if nf.Status != 0 && nf.Status != http.StatusNotFound {
		ep.StatusRewrites = map[string]int{"404": nf.Status}
	}
	mw, err := middleware.New(ctx, "notFound@"+entryPoint, &config.Middleware{Errors: ep}, g)
	if err != nil {
		return nil, fmt.Errorf("notFound: %w", err)
	}
	return mw(http.HandlerFunc(http.NotFound)), nil
}

// CheckNotFound validates entryPoints.<ep>.http.notFound as far as the
// static configuration can: a qualified service name and a status in
// 100-599 (0: 404). Whether the service exists is known per generation.
func CheckNotFound(nf *static.NotFoundPage) error {
	if nf.Service == "" {
		return fmt.Errorf("notFound.service: empty")
	}
	if !strings.Contains(nf.Service, "@") {
		return fmt.Errorf("notFound.service %q: want a qualified name (service@provider, such as %s@file)", nf.Service, nf.Service)
	}
	if nf.Status != 0 && (nf.Status < 100 || nf.Status > 599) {
		return fmt.Errorf("notFound.status %s: not an HTTP status (100-599)", strconv.Itoa(nf.Status))
	}
	return nil
}
