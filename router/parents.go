package router

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// childrenOf maps each router to the routers naming it in parentRefs,
// sorted by name.
func childrenOf(routers map[string]*config.Router) map[string][]string {
	out := map[string][]string{}
	for name, r := range routers {
		if r == nil {
			continue
		}
		for _, p := range r.ParentRefs {
			if !slices.Contains(out[p], name) {
				out[p] = append(out[p], name)
			}
		}
	}
	for _, k := range out {
		slices.Sort(k)
	}
	return out
}

// parent checks and builds a router with children: its own rule decides
// whether a request enters it; its middlewares run; then its children
// (by priority, first match, as in an entrypoint) decide where it goes,
// 404 when none matches. Children are compiled into a mux of their own
// once, here, not looked up per request from the configuration. visiting
// holds the routers on the path from the root (cycle detection).
func (c *compiler) parent(name string, r *config.Router, st *RouterStatus, visiting map[string]bool) *route {
	comp, ok := c.check(name, r, st)
	if !ok {
		return nil
	}
	var routes []*route
	for _, k := range c.children[name] {
		if kr := c.child(k, visiting); kr != nil {
			routes = append(routes, kr) // newMux copies it
		}
	}
	if len(routes) == 0 {
		st.Errors = append(st.Errors, "no usable child router (see the routers naming it in parentRefs)")
		return nil
	}
	children := newMux(routes) // routes is empty without a builder

	next := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		in := newInput(req)
		if rt := children.lookup(&in); rt != nil {
			rt.h.ServeHTTP(w, req)
			return
		}
		notFound(w, req)
	})
	h, err := c.b.BuildParent(c.ctx, name, r, next)
	if err == nil && h == nil {
		err = fmt.Errorf("builder returned no handler")
	}
	if err != nil {
		st.Errors = append(st.Errors, err.Error())
		return nil
	}
	return &route{name: name, rule: r.Rule, priority: st.Priority, m: comp.root, h: h}
}

// child returns the route of child router name (built once however many
// parents it has), or nil when it is disabled.
func (c *compiler) child(name string, visiting map[string]bool) *route {
	if rt, done := c.childRoutes[name]; done {
		return rt
	}
	r := c.http().Routers[name]
	st := &RouterStatus{Status: StatusEnabled}
	c.report.Routers[name] = st
	var rt *route
	switch {
	case r == nil:
		st.Errors = []string{"empty definition"}
	case visiting[name]:
		st.Errors = []string{"parentRefs cycle: the router is its own ancestor"}
	case len(c.children[name]) > 0:
		visiting[name] = true
		rt = c.parent(name, r, st, visiting)
		delete(visiting, name)
	default:
		rt = c.router(name, r, st)
	}
	st.Using = nil // a child is reached through its parents, not an entrypoint
	switch {
	case rt == nil:
		st.Status = StatusDisabled
	case len(st.Errors) > 0:
		st.Status = StatusWarning
	}
	c.childRoutes[name] = rt
	return rt
}

// orphans reports the child routers no root reached: a missing or
// disabled parent, or a cycle with no root.
func (c *compiler) orphans(names []string) {
	h := c.http()
	for _, name := range names {
		r := h.Routers[name]
		if r == nil || len(r.ParentRefs) == 0 || c.report.Routers[name] != nil {
			continue
		}
		var why []string
		for _, p := range r.ParentRefs {
			switch pr, ok := h.Routers[p]; {
			case !ok:
				why = append(why, fmt.Sprintf("parent router %q does not exist", p))
			case pr != nil && len(pr.ParentRefs) > 0:
				why = append(why, fmt.Sprintf("parent router %q is not reached from a root router", p))
			default:
				why = append(why, fmt.Sprintf("parent router %q is disabled", p))
			}
		}
		c.report.Routers[name] = &RouterStatus{Status: StatusDisabled, Errors: []string{strings.Join(why, "; ")}}
	}
}
