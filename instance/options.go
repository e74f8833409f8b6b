package instance

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane"
	"github.com/gantry-proxy/gantry/dataplane/udpproxy"
	"github.com/gantry-proxy/gantry/router"
)

// RouterOptions derives router.Compile's options from the static
// configuration c: its entrypoints (by name, with asDefault and UDP), the
// default rule syntax (core) and the redirecting entrypoints' routes.
func RouterOptions(c *static.Configuration) router.Options {
	var o router.Options
	for _, name := range slices.Sorted(maps.Keys(c.EntryPoints)) {
		o.EntryPoints = append(o.EntryPoints, router.EntryPoint{Name: name, AsDefault: c.EntryPoints[name].AsDefault, UDP: IsUDP(c.EntryPoints[name])})
	}
	if c.Core != nil {
		o.DefaultRuleSyntax = c.Core.DefaultRuleSyntax
	}
	// Bad redirections are refused when the static configuration loads;
	// here they would only leave the redirect routers out.
	o.Internal, _ = dataplane.RedirectRoutes(c.EntryPoints)
	return o
}

// EntryPointMiddlewares returns entryPoints.<ep>.http.middlewares per
// entrypoint, for generation.Options, as written: the Generation
// qualifies a name without "@" with each router's provider, as Traefik
// does.
func EntryPointMiddlewares(c *static.Configuration) map[string][]string {
	out := map[string][]string{}
	for name, ep := range c.EntryPoints {
		if ep.HTTP != nil && len(ep.HTTP.Middlewares) > 0 {
			out[name] = slices.Clone(ep.HTTP.Middlewares)
		}
	}
	return out
}

// EntryPointNotFound returns entryPoints.<ep>.http.notFound per
// entrypoint, for generation.Options.
func EntryPointNotFound(c *static.Configuration) map[string]*static.NotFoundPage {
	out := map[string]*static.NotFoundPage{}
	for name, ep := range c.EntryPoints {
		if ep.HTTP != nil && ep.HTTP.NotFound != nil {
			out[name] = ep.HTTP.NotFound
		}
	}
	return out
}

// IsUDP reports whether ep listens on UDP (address "…/udp").
func IsUDP(ep *static.EntryPoint) bool {
	_, proto, _ := strings.Cut(ep.Address, "/")
	return strings.EqualFold(proto, "udp")
}

// splitEntryPoints separates the TCP entrypoints (served by
// dataplane.Server) from the UDP ones (udpproxy.Server; grace 10 s unless
// transport.lifeCycle.graceTimeOut says otherwise).
func splitEntryPoints(c *static.Configuration) (tcp map[string]*static.EntryPoint, udp []udpproxy.EntryPoint) {
	tcp = map[string]*static.EntryPoint{}
	for _, name := range slices.Sorted(maps.Keys(c.EntryPoints)) {
		ep := c.EntryPoints[name]
		if !IsUDP(ep) {
			tcp[name] = ep
			continue
		}
		addr, _, _ := strings.Cut(ep.Address, "/")
		u := udpproxy.EntryPoint{Name: name, Address: addr, Grace: 10 * time.Second}
		if ep.UDP != nil {
			u.Timeout = ep.UDP.Timeout.D()
		}
		if lc := ep.Transport; lc != nil && lc.LifeCycle != nil && lc.LifeCycle.GraceTimeOut > 0 {
			u.Grace = lc.LifeCycle.GraceTimeOut.D()
		}
		udp = append(udp, u)
	}
	return tcp, udp
}

// HTTP01EntryPoints lists the entrypoints the ACME resolvers answer
// HTTP-01 challenges on (certificatesResolvers.<r>.acme.httpChallenge),
// sorted, without duplicates.
func HTTP01EntryPoints(c *static.Configuration) []string {
	var out []string
	for _, r := range c.CertificatesResolvers {
		if r != nil && r.ACME != nil && r.ACME.HTTPChallenge != nil && r.ACME.HTTPChallenge.EntryPoint != "" {
			out = append(out, r.ACME.HTTPChallenge.EntryPoint)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
