package dataplane

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/router"
)

// RedirectRoutes returns the routers of entryPoints.<ep>.http.redirections
// .entryPoint, as Traefik builds them (pkg/provider/traefik/internal.go):
// one router "<ep>-to-<to>@internal" per redirecting entrypoint, on that
// entrypoint's non-TLS side, with rule HostRegexp(`^.+$`) and priority
// (default math.MaxInt - 1, above every user router, whose maximum is
// config.MaxPriority), answering with a redirect to scheme (default https)
// on the target entrypoint's port (or the port given as to), 301/308 when
// permanent (the default), 302/307 otherwise. Because it is an ordinary
// route of the table, a user router with a higher priority (when the
// redirection's priority is lowered) is matched first, and the ACME
// HTTP-01 hook still answers ahead of it. With allowACMEByPass the rule
// leaves out /.well-known/acme-challenge/, so the user's own solver router
// gets challenges. Errors name the entrypoint.
// Source: https://doc.traefik.io/traefik/reference/install-configuration/entrypoints/#redirection
func RedirectRoutes(eps map[string]*static.EntryPoint) ([]router.InternalRoute, error) {
	var out []router.InternalRoute
	for _, name := range slices.Sorted(maps.Keys(eps)) {
		ep := eps[name]
		if ep == nil || ep.HTTP == nil || ep.HTTP.Redirections == nil || ep.HTTP.Redirections.EntryPoint == nil {
			continue
		}
		c := ep.HTTP.Redirections.EntryPoint
		rd, err := newRedirect(c, eps)
		if err != nil {
			return nil, fmt.Errorf("entryPoints.%s.http.redirections.entryPoint: %w", name, err)
		}
		prio := c.Priority
		if prio == 0 {
			prio = math.MaxInt - 1
		}
		rule := "HostRegexp(`^.+$`)"
		if ep.AllowACMEByPass {
			// ACME challenges go on to the user's routers (Traefik).
			rule += " && !PathPrefix(`" + certs.ACMEChallengePath + "`)"
		}
		port := rd.port
		if port == "" {
			port = map[string]string{"https": "443", "http": "80"}[rd.scheme]
		}
		out = append(out, router.InternalRoute{
			Name:           normalizeName(name+"-to-"+c.To) + "@internal",
			MiddlewareName: "redirect-" + normalizeName(name+"-to-"+c.To) + "@internal",
			Middleware:     &config.Middleware{RedirectScheme: &config.RedirectScheme{Scheme: rd.scheme, Port: port, Permanent: rd.permanent}},
			EntryPoint:     name,
			Rule:           rule,
			Priority:       prio,
			Handler:        rd,
		})
	}
	return out, nil
}

// normalizeName is Traefik's provider.Normalize: every run of characters
// other than letters and digits becomes one "-".
func normalizeName(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}), "-")
}
