package router

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// Options for Compile.
type Options struct {
	// EntryPoints lists every configured entrypoint.
	EntryPoints []EntryPoint
	// DefaultRuleSyntax is "v3" (or "", the default) or "v2": the syntax of
	// routers without a ruleSyntax (static core.defaultRuleSyntax).
	DefaultRuleSyntax string
	// Internal lists routers Gantry adds itself (the entrypoint
	// redirections), routed with the configuration's routers by priority.
	Internal []InternalRoute
}

// InternalRoute is a router Gantry provides, such as Traefik's
// "<ep>-to-<to>@internal" redirection router: a v3 rule on the non-TLS
// side of one entrypoint, with a priority and a ready handler.
type InternalRoute struct {
	Name       string // qualified, "web-to-websecure@internal"
	EntryPoint string
	Rule       string
	Priority   int // 0: len(Rule)
	Handler    http.Handler
	// Middleware, when set, is what Handler does, shown in the API as a
	// middleware of the router, named MiddlewareName (qualified), as
	// Traefik shows "redirect-web-to-websecure@internal".
	MiddlewareName string
	Middleware     *config.Middleware
}

// EntryPoint is one configured entrypoint. A router with no entryPoints
// attaches to every AsDefault entrypoint, or to all entrypoints when none
// is AsDefault, never to "traefik" nor a UDP one (defaultEntryPoints;
// Traefik, https://doc.traefik.io/traefik/routing/entrypoints/#asdefault).
type EntryPoint struct {
	Name      string
	AsDefault bool
	// UDP marks a UDP entrypoint (address ":53/udp"): only UDP routers
	// attach to it, and only TCP and HTTP routers to the others.
	UDP bool
	// Dynamic marks an entrypoint a provider asked for (Gantry's dynamic
	// entrypoints): it is never a default, so only the routers naming it
	// attach to it.
	Dynamic bool
}

// internalSuffix marks objects provided by Gantry itself ("api@internal");
// they are not in the merged configuration, so Compile leaves checking
// them to the Builder.
const internalSuffix = "@internal"

// Compile builds the routing table of one generation from m. It never fails
// as a whole: a router with a bad rule, an unknown or broken service or
// middleware, a priority above config.MaxPriority, no known entrypoint, or
// a builder error is left out and marked disabled in the Report with the
// reason; every other router is routed. b's methods are called from the
// calling goroutine, in the order and as often as Builder documents:
// BuildTLS gets m's TLS section and the TLS options of every HTTPS host
// (resolveTLS), and the HTTPS routers resolved to options it cannot build
// are disabled; a TLS request whose connection negotiated other options
// than its router resolved to (b.NegotiatedTLSOptions) is answered 421
// (see entryHandler). A nil m compiles to an empty table; a nil b
// disables every router.
//
// Rules: Traefik v3 syntax unless the router's ruleSyntax (or
// opts.DefaultRuleSyntax) is "v2". Priority: the configured value, else
// len(rule); among equal priorities the router with the smaller qualified
// name is tried first.
func Compile(ctx context.Context, m *providers.Merged, b Builder, opts Options) *Table {
	t := emptyTable()
	if m == nil {
		return t
	}
	if m.Config == nil {
		cp := *m
		cp.Config = &config.Configuration{}
		m = &cp
	}
	t.merged = m
	c := &compiler{ctx: ctx, m: m, b: b, opts: opts, report: t.report, objErrs: map[string][]string{}}
	c.objects()
	perEP := c.routers()
	c.internal(perEP)
	if b != nil {
		c.objectUses(b.ObjectErrors())
	}
	tlsHosts := c.resolveTLS(perEP)
	var negotiated func(*http.Request) (string, bool)
	if b != nil {
		c.buildTLS(t, perEP, tlsHosts)
		negotiated = b.NegotiatedTLSOptions
	}
	for _, ep := range opts.EntryPoints {
		if ep.UDP {
			continue
		}
		rs := perEP[ep.Name]
		var plain, secure []*route
		for _, r := range rs {
			if r.tls {
				secure = append(secure, r.route)
			} else {
				plain = append(plain, r.route)
			}
		}
		t.eps[ep.Name] = &entryHandler{name: ep.Name, plain: newMux(plain), secure: newMux(secure), notFound: c.notFound(ep.Name),
			negotiated: negotiated, tlsHosts: tlsHosts[ep.Name]}
	}
	c.compileTCP(t, perEP)
	for name, e := range t.eps {
		e.tcp = t.tcp[name]
	}
	return t
}

// objectUses marks the objects in error that the builder reports
// (Builder.ObjectErrors), with the routers they affect.
func (c *compiler) objectUses(uses []*ObjectUse) {
	for _, u := range uses {
		c.objectFailed(u.Err)
		if s := c.report.Middlewares[u.Err.Name]; s != nil && u.Err.Kind == "middleware" {
			for _, by := range u.UsedBy {
				s.UsedBy = appendSorted(s.UsedBy, by)
			}
		}
	}
}

// buildTLS builds the certificate source of t with the builder
// (Builder.BuildTLS) for the HTTPS hosts tlsHosts, reports its errors and
// warnings, and disables the HTTPS routers of perEP whose options it could
// not build.
func (c *compiler) buildTLS(t *Table, perEP map[string][]placed, tlsHosts TLSHosts) {
	tc := c.m.Config.TLS
	if tc == nil {
		tc = &config.TLSConfiguration{}
	}
	get, errs := c.b.BuildTLS(c.ctx, tc, tlsHosts)
	t.getCert = get
	broken := map[string]*TLSOptionsError{}
	for _, err := range errs {
		if w, ok := errors.AsType[*TLSWarning](err); ok {
			t.report.TLSWarnings = append(t.report.TLSWarnings, w.Error())
			continue
		}
		if oe, ok := errors.AsType[*TLSOptionsError](err); ok {
			broken[oe.Name] = oe
			if oe.Missing {
				continue // reported on the routers naming it
			}
		}
		t.report.TLS = append(t.report.TLS, err.Error())
	}
	c.dropBrokenTLS(perEP, broken)
}

// notFound returns the handler for requests of entryPoint that match no
// router: the builder's (Builder.BuildNotFound), else the bare 404. A
// builder error is reported in Report.NotFound.
func (c *compiler) notFound(entryPoint string) http.Handler {
	if c.b == nil {
		return notFound
	}
	h, err := c.b.BuildNotFound(c.ctx, entryPoint)
	if err != nil {
		c.report.NotFound = append(c.report.NotFound, "entrypoint "+entryPoint+": "+err.Error())
		return notFound
	}
	if h == nil {
		return notFound
	}
	return h
}

type compiler struct {
	ctx    context.Context
	m      *providers.Merged
	b      Builder // nil: every router is disabled
	opts   Options
	report *Report
	// objErrs holds the routers' validation errors, keyed by the
	// ValidationError kind and the name: "router web", "tcpRouter db",
	// "udpRouter dns".
	objErrs map[string][]string
	// children maps a router to the routers naming it in parentRefs
	// (sorted); childRoutes caches each child's route (nil: disabled).
	children    map[string][]string
	childRoutes map[string]*route
}

type placed struct {
	route *route
	tls   bool
}

func (c *compiler) http() *config.HTTPConfiguration {
	if c.m.Config.HTTP == nil {
		return &config.HTTPConfiguration{}
	}
	return c.m.Config.HTTP
}

// objects registers every HTTP, TCP and UDP service and middleware with
// its validation errors, and collects the routers' validation errors
// (objErrs, keyed by the ValidationError kind and name): the one place
// config.Validate runs on the merged configuration.
func (c *compiler) objects() {
	cfg := c.m.Config
	h := c.http()
	register(c.report.Services, h.Services)
	register(c.report.Middlewares, h.Middlewares)
	if t := cfg.TCP; t != nil {
		register(c.report.TCPServices, t.Services)
		register(c.report.TCPMiddlewares, t.Middlewares)
	}
	if u := cfg.UDP; u != nil {
		register(c.report.UDPServices, u.Services)
	}
	for _, ve := range config.Validate(cfg) {
		msg := ve.Msg
		if ve.Field != "" {
			msg = ve.Field + ": " + ve.Msg
		}
		switch ve.Kind {
		case "service":
			c.report.Services[ve.Name].fail(msg)
		case "middleware":
			c.report.Middlewares[ve.Name].fail(msg)
		case config.KindTCPService:
			c.report.TCPServices[ve.Name].fail(msg)
		case config.KindTCPMiddleware:
			c.report.TCPMiddlewares[ve.Name].fail(msg)
		case config.KindUDPService:
			c.report.UDPServices[ve.Name].fail(msg)
		case "router", config.KindTCPRouter, config.KindUDPRouter:
			c.objErrs[ve.Kind+" "+ve.Name] = append(c.objErrs[ve.Kind+" "+ve.Name], msg)
		}
	}
	c.stickyWarnings(h.Services)
}

// register adds an enabled status for every object of objs to report.
func register[T any](report map[string]*ObjectStatus, objs map[string]T) {
	for name := range objs {
		report[name] = &ObjectStatus{Status: StatusEnabled}
	}
}

// routers checks and builds every router, returning the routes per
// entrypoint name.
func (c *compiler) routers() map[string][]placed {
	h := c.http()
	names := make([]string, 0, len(h.Routers))
	for n := range h.Routers {
		names = append(names, n)
	}
	slices.Sort(names)
	perEP := map[string][]placed{}
	c.children = childrenOf(h.Routers)
	c.childRoutes = map[string]*route{}
	for _, name := range names {
		r := h.Routers[name]
		if r != nil && len(r.ParentRefs) > 0 {
			continue // placed under its parents by c.parent
		}
		st := &RouterStatus{Status: StatusEnabled}
		c.report.Routers[name] = st
		if r == nil {
			st.Status, st.Errors = StatusDisabled, []string{"empty definition"}
			continue
		}
		var rt *route
		if len(c.children[name]) > 0 {
			rt = c.parent(name, r, st, map[string]bool{name: true})
		} else {
			rt = c.router(name, r, st)
		}
		if !settle(st, rt != nil) {
			continue
		}
		for _, ep := range st.Using {
			perEP[ep] = append(perEP[ep], placed{route: rt, tls: r.TLS != nil})
		}
	}
	c.orphans(names)
	return perEP
}

// router checks one router and builds its route; nil means disabled (the
// reasons are in st.Errors, warnings may be there too).
func (c *compiler) router(name string, r *config.Router, st *RouterStatus) *route {
	comp, ok := c.check(name, r, st)
	if !ok {
		return nil
	}
	if c.b == nil {
		st.Errors = append(st.Errors, "no handler builder")
		return nil
	}
	handler, err := c.b.Build(c.ctx, name, r)
	if !c.built(st, handler == nil, err) {
		return nil
	}
	return &route{name: name, rule: r.Rule, priority: st.Priority, m: comp.root, h: handler}
}

// check runs the checks of one router that do not build anything:
// entrypoints, rule, references. ok is false when the router is disabled.
func (c *compiler) check(name string, r *config.Router, st *RouterStatus) (*compiled, bool) {
	st.Priority = r.Priority
	if st.Priority == 0 {
		st.Priority = len(r.Rule)
	}
	k := c.startCheck("router", name, "", r.EntryPoints, st)
	fail := k.fail
	// Rule.
	var comp *compiled
	if strings.TrimSpace(r.Rule) != "" {
		syntax := r.RuleSyntax
		if syntax == "" {
			syntax = c.opts.DefaultRuleSyntax
		}
		var err error
		comp, err = compileRule(r.Rule, syntax)
		if err != nil {
			fail("rule: %v", err)
		} else {
			st.Errors = append(st.Errors, comp.warnings...)
		}
	}
	// References.
	h := c.http()
	if r.Service != "" && !strings.HasSuffix(r.Service, internalSuffix) {
		if s, ok := h.Services[r.Service]; !ok || s == nil {
			fail("service %q does not exist", r.Service)
		}
	}
	useObject(c.report.Services, "service", r.Service, name, fail)
	for _, mw := range r.Middlewares {
		if mw == "" || strings.HasSuffix(mw, internalSuffix) {
			continue
		}
		if !useObject(c.report.Middlewares, "middleware", mw, name, fail) {
			fail("middleware %q does not exist", mw)
		}
	}
	if k.failed || comp == nil {
		return nil, false
	}
	return comp, true
}

// internal adds Options.Internal to the routes of their entrypoints and to
// the report; a route with a bad rule or an unknown entrypoint is reported
// disabled.
func (c *compiler) internal(perEP map[string][]placed) {
	for _, ir := range c.opts.Internal {
		st := &RouterStatus{Status: StatusEnabled, EntryPoints: []string{ir.EntryPoint}, Priority: ir.Priority}
		if st.Priority == 0 {
			st.Priority = len(ir.Rule)
		}
		c.report.Routers[ir.Name] = st
		comp, err := compileRule(ir.Rule, "v3")
		switch {
		case err != nil:
			st.Status, st.Errors = StatusDisabled, []string{fmt.Sprintf("rule: %v", err)}
			continue
		case !c.knownEntryPoint(ir.EntryPoint):
			st.Status, st.Errors = StatusDisabled, []string{fmt.Sprintf("entrypoint %q does not exist", ir.EntryPoint)}
			continue
		case ir.Handler == nil:
			st.Status, st.Errors = StatusDisabled, []string{"no handler"}
			continue
		}
		st.Using = []string{ir.EntryPoint}
		cfg := &config.Router{RouterCommon: config.RouterCommon{EntryPoints: []string{ir.EntryPoint}, Rule: ir.Rule, Priority: st.Priority, Service: "noop@internal"}}
		if ir.Middleware != nil && ir.MiddlewareName != "" {
			cfg.Middlewares = []string{ir.MiddlewareName}
			c.report.InternalMiddlewares[ir.MiddlewareName] = ir.Middleware
			c.report.Middlewares[ir.MiddlewareName] = &ObjectStatus{Status: StatusEnabled, UsedBy: []string{ir.Name}}
		}
		c.report.InternalRouters[ir.Name] = cfg
		h := ir.Handler
		if c.b != nil {
			h = c.b.WrapInternal(c.ctx, ir.Name, cfg, h)
		}
		perEP[ir.EntryPoint] = append(perEP[ir.EntryPoint], placed{route: &route{name: ir.Name, rule: ir.Rule, priority: st.Priority, m: comp.root, h: h}})
	}
}
