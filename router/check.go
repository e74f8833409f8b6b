package router

import (
	"fmt"
	"slices"
	"strings"
)

// The checks every router goes through, HTTP, TCP and UDP alike: its
// validation errors and entrypoints (startCheck), the objects it uses
// (useObject), the objects a builder found broken (objectFailed), and its
// final status (settle).

// settle sets a checked router's status: disabled unless built, else a
// warning when it has errors; it reports built.
func settle(st *RouterStatus, built bool) bool {
	switch {
	case !built:
		st.Status = StatusDisabled
	case len(st.Errors) > 0:
		st.Status = StatusWarning
	}
	return built
}

// routerCheck gathers the errors of one router on st: fail adds one that
// disables the router (failed); warnings go to st.Errors directly.
type routerCheck struct {
	st     *RouterStatus
	failed bool
}

func (k *routerCheck) fail(format string, a ...any) {
	k.st.Errors = append(k.st.Errors, fmt.Sprintf(format, a...))
	k.failed = true
}

// startCheck begins checking router name of kind (the ValidationError
// kind: "router", "tcpRouter", "udpRouter") and protocol proto ("", "TCP",
// "UDP"): its validation errors, then its entrypoints eps (entryPointsOf).
func (c *compiler) startCheck(kind, name, proto string, eps []string, st *RouterStatus) *routerCheck {
	k := &routerCheck{st: st}
	for _, e := range c.objErrs[kind+" "+name] {
		k.fail("%s", e)
	}
	c.entryPointsOf(eps, proto, st, k.fail)
	return k
}

// useObject records that router by uses the object obj of objs (its
// report: UsedBy, kept sorted) and fails by ("<kind> %q is disabled: <its
// errors>") when it is disabled; false when objs has no obj.
func useObject(objs map[string]*ObjectStatus, kind, obj, by string, fail func(string, ...any)) bool {
	s := objs[obj]
	if s == nil {
		return false
	}
	s.UsedBy = appendSorted(s.UsedBy, by)
	if s.Status == StatusDisabled {
		fail("%s %q is disabled: %s", kind, obj, strings.Join(s.Errors, "; "))
	}
	return true
}

// objectFailed marks the service or middleware named by oe disabled
// (Kind "service", "middleware", "tcp service", "tcp middleware" or "udp
// service"; any other kind counts as an HTTP service), adding it to the
// report if the merged configuration does not hold it (an @internal
// object).
func (c *compiler) objectFailed(oe *ObjectError) {
	var objs map[string]*ObjectStatus
	switch oe.Kind {
	case "middleware":
		objs = c.report.Middlewares
	case "tcp service":
		objs = c.report.TCPServices
	case "tcp middleware":
		objs = c.report.TCPMiddlewares
	case "udp service":
		objs = c.report.UDPServices
	default:
		objs = c.report.Services
	}
	s := objs[oe.Name]
	if s == nil {
		s = &ObjectStatus{}
		objs[oe.Name] = s
	}
	msg := "<nil>"
	if oe.Err != nil {
		msg = oe.Err.Error()
	}
	s.fail(msg)
}

func (c *compiler) knownEntryPoint(name string) bool {
	return slices.ContainsFunc(c.opts.EntryPoints, func(e EntryPoint) bool { return e.Name == name })
}

// APIEntryPoint is the entrypoint of the API and dashboard: never a
// default entrypoint, so a router without entryPoints is never served on
// the dashboard's port (Traefik getDefaultsEntrypoints).
const APIEntryPoint = "traefik"

// defaultEntryPoints returns the entrypoints of the routers that name
// none, sorted: the AsDefault ones, or all when none is AsDefault; for
// TCP and HTTP routers (udp false) never a UDP entrypoint nor "traefik",
// and AsDefault on those does not count (Traefik's documentation: it "has
// no effect"; Traefik's code would leave the set empty, case 059). For
// UDP routers: every UDP entrypoint. Dynamic entrypoints are never
// defaults.
func (c *compiler) defaultEntryPoints(udp bool) []string {
	var def, all []string
	for _, e := range c.opts.EntryPoints {
		if e.UDP != udp || e.Dynamic || (!udp && e.Name == APIEntryPoint) {
			continue
		}
		all = append(all, e.Name)
		if e.AsDefault && !udp {
			def = append(def, e.Name)
		}
	}
	if len(def) == 0 {
		def = all
	}
	slices.Sort(def)
	return slices.Compact(def)
}

func appendSorted(s []string, v string) []string {
	i, found := slices.BinarySearch(s, v)
	if found {
		return s
	}
	return slices.Insert(s, i, v)
}

// entryPointsOf resolves a router's entrypoints (eps; none: the
// defaults) among those of its protocol, proto "" (HTTP), "TCP" or "UDP":
// st.EntryPoints gets eps, st.Using the entrypoints served, sorted. An
// unknown entrypoint or one of the other protocol is an error on st; none
// left fails the router.
func (c *compiler) entryPointsOf(eps []string, proto string, st *RouterStatus, fail func(string, ...any)) {
	udp := proto == "UDP"
	st.EntryPoints = slices.Clone(eps)
	if len(eps) == 0 {
		st.Using = c.defaultEntryPoints(udp)
		switch {
		case len(st.Using) > 0:
		case proto == "":
			fail("no entrypoint configured")
		default:
			fail("no %s entrypoint configured", proto)
		}
		return
	}
	for _, ep := range eps {
		i := slices.IndexFunc(c.opts.EntryPoints, func(e EntryPoint) bool { return e.Name == ep })
		switch {
		case i < 0:
			st.Errors = append(st.Errors, fmt.Sprintf("entrypoint %q does not exist", ep))
		case c.opts.EntryPoints[i].UDP != udp && proto == "":
			st.Errors = append(st.Errors, fmt.Sprintf("entrypoint %q is a UDP entrypoint", ep))
		case c.opts.EntryPoints[i].UDP != udp:
			st.Errors = append(st.Errors, fmt.Sprintf("entrypoint %q is not a %s entrypoint", ep, proto))
		case !slices.Contains(st.Using, ep):
			st.Using = append(st.Using, ep)
		}
	}
	slices.Sort(st.Using)
	if len(st.Using) == 0 {
		fail("no valid entrypoint")
	}
}
