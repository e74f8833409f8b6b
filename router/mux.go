package router

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
)

// route is one router installed on one entrypoint mux. Immutable.
type route struct {
	name     string // qualified router name
	rule     string
	priority int // effective
	rank     int // position in the mux's priority order (0 first)
	// tlsOptions is the tls.options name an HTTPS route resolved to on
	// its entrypoint (resolveTLS); "" for a plain route.
	tlsOptions string
	m          *node
	h          http.Handler
}

// mux holds the routes of one entrypoint for one transport (TLS or not),
// indexed so that lookup returns what a linear scan in priority order
// would:
//
//   - exact: routes whose rule can only match one of a set of exact hosts,
//     under each of those hosts;
//   - wild: routes that can only match "*.suffix" hosts, under each suffix;
//   - fallback: every other route (no host, Host(`*`), HostRegexp, or a
//     host set that is only a possibility, such as in an || with a path).
//
// A route may sit under several keys. Each list is in priority order, and
// lookup merges the (at most three) lists for the request host by rank.
type mux struct {
	all      []*route // every route in priority order
	exact    map[string][]*route
	wild     map[string][]*route
	fallback []*route
}

// less orders routes by priority, higher first, then by qualified name
// (ties are broken by name so that the order never depends on map
// iteration or provider timing; Traefik breaks them by provider
// precedence, which Gantry does not have).
func less(a, b *route) int {
	if c := cmp.Compare(b.priority, a.priority); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

// newMux indexes routes, which it copies: a router on several entrypoints
// has one route per mux, each with its own rank (sharing one value let the
// last mux built overwrite the rank the others ordered it by).
func newMux(routes []*route) *mux {
	routes = slices.Clone(routes)
	for i, r := range routes {
		cp := *r
		routes[i] = &cp
	}
	slices.SortFunc(routes, less)
	m := &mux{all: routes, exact: map[string][]*route{}, wild: map[string][]*route{}}
	for i, r := range routes {
		r.rank = i
		hs := hostsOf(r.m)
		if hs == nil {
			m.fallback = append(m.fallback, r)
			continue
		}
		for _, h := range uniq(hs.exact) {
			m.exact[h] = append(m.exact[h], r)
		}
		for _, s := range uniq(hs.wild) {
			m.wild[s] = append(m.wild[s], r)
		}
	}
	return m
}

func uniq(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

// hostSet is a necessary condition on the request host: a rule with this
// set cannot match a request whose host is not one of exact and not one
// label followed by one of wild.
type hostSet struct {
	exact []string
	wild  []string
}

func (h *hostSet) size() int { return len(h.exact) + len(h.wild) }

// hostsOf derives the host set of a matcher tree, or nil when the tree may
// match some request of any host.
func hostsOf(n *node) *hostSet {
	switch n.kind {
	case kHost:
		return &hostSet{exact: []string{n.s}}
	case kHostWild:
		return &hostSet{wild: []string{n.s}}
	case kAnd:
		l, r := hostsOf(n.l), hostsOf(n.r)
		switch {
		case l == nil:
			return r
		case r == nil:
			return l
		case r.size() < l.size():
			return r
		}
		return l
	case kOr:
		l, r := hostsOf(n.l), hostsOf(n.r)
		if l == nil || r == nil {
			return nil
		}
		return &hostSet{exact: append(slices.Clip(l.exact), r.exact...), wild: append(slices.Clip(l.wild), r.wild...)}
	}
	return nil
}

// lookup returns the first route in priority order whose rule matches, or
// nil. It takes no lock and does not allocate.
func (m *mux) lookup(in *input) *route {
	var a, b []*route
	if in.host != "" {
		a = m.exact[in.host]
		if i := strings.IndexByte(in.host, '.'); i > 0 {
			b = m.wild[in.host[i+1:]]
		}
	}
	c := m.fallback
	for {
		r := first(&a, &b, &c)
		if r == nil {
			return nil
		}
		if r.m.match(in) {
			return r
		}
	}
}

// first pops and returns the lowest-ranked head of the three lists.
func first(a, b, c *[]*route) *route {
	best := a
	if len(*best) == 0 || (len(*b) > 0 && (*b)[0].rank < (*best)[0].rank) {
		best = b
	}
	if len(*best) == 0 || (len(*c) > 0 && (*c)[0].rank < (*best)[0].rank) {
		best = c
	}
	if len(*best) == 0 {
		return nil
	}
	r := (*best)[0]
	*best = (*best)[1:]
	return r
}
