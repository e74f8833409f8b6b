package router

import (
	"cmp"
	"maps"
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
	// guarded routes can only match a request whose HostRegexp host
	// (regexpHost) starts with pre and ends with suf: see hostReOf.
	guarded  bool
	pre, suf string
}

// admits reports whether r's literal guard lets host through (always true
// for an unguarded route): a cheap test that spares a regexp that cannot
// match.
func (r *route) admits(host string) bool {
	return !r.guarded || (strings.HasPrefix(host, r.pre) && strings.HasSuffix(host, r.suf))
}

// mux holds the routes of one entrypoint for one transport (TLS or not),
// indexed so that lookup returns what a linear scan in priority order
// would:
//
//   - exact: routes whose rule can only match one of a set of exact hosts,
//     under each of those hosts;
//   - wild: routes that can only match "*.suffix" hosts, under each suffix;
//   - pre: routes whose rule needs a HostRegexp that can only match hosts
//     starting with a literal (`^tenant7-[a-z]+\.example\.com$`), under
//     that literal, for the maxPreLens most common literal lengths;
//   - re: other routes whose rule needs a HostRegexp that can only match hosts
//     ending with "." + a literal domain (`^[a-z]+\.example\.com$`),
//     under that domain's last one to reDepth labels ("example.com");
//   - fallback: every other route (no host, Host(`*`), another HostRegexp,
//     or a host set that is only a possibility, such as in an || with a
//     path).
//
// A route may sit under several keys. Each list is in priority order, and
// lookup merges the (at most 3 + reDepth + maxPreLens) lists for the
// request host by rank. HostRegexp routes also carry the literal prefix and suffix their
// pattern requires (route.admits), tested before the regexp: with 10 000
// HostRegexp routers a request for another domain meets none of them, and
// one in their domain runs only the regexps whose literals it has (issue
// 23: every request cost 2-5 ms of regexps that could never match).
type mux struct {
	all      []*route // every route in priority order
	exact    map[string][]*route
	wild     map[string][]*route
	pre      map[string][]*route // HostRegexp routes by their literal prefix
	preLens  []int               // the lengths of pre's keys, at most maxPreLens
	re       map[string][]*route
	fallback []*route
}

// reDepth is the most labels of a HostRegexp's domain used as its key in
// mux.re; maxPreLens the most prefix lengths mux.pre is looked up with
// (routes with other lengths go to mux.re or the fallback list).
const (
	reDepth    = 3
	maxPreLens = 8
)

// lists is the candidate lists of one lookup, merged by rank: fallback,
// exact, wild, then reDepth lists from re and maxPreLens from pre.
type lists [3 + reDepth + maxPreLens][]*route

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
	m := &mux{all: routes, exact: map[string][]*route{}, wild: map[string][]*route{}, pre: map[string][]*route{}, re: map[string][]*route{}}
	preLens := m.prefixLengths(routes)
	for i, r := range routes {
		r.rank = i
		hs := hostsOf(r.m)
		if hs == nil {
			if lit, ok := hostReOf(r.m); ok {
				r.guarded, r.pre, r.suf = true, lit.pre, lit.suf
				if preLens[len(lit.pre)] {
					m.pre[lit.pre] = append(m.pre[lit.pre], r)
					continue
				}
				if d := lit.domain(); d != "" {
					m.re[d] = append(m.re[d], r)
					continue
				}
			}
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

// prefixLengths chooses the literal prefix lengths mux.pre indexes: those
// of the most HostRegexp routes (with a host set, a route is indexed by
// it instead), at most maxPreLens of them; it sets m.preLens.
func (m *mux) prefixLengths(routes []*route) map[int]bool {
	count := map[int]int{}
	for _, r := range routes {
		if hostsOf(r.m) != nil {
			continue
		}
		if lit, ok := hostReOf(r.m); ok && lit.pre != "" {
			count[len(lit.pre)]++
		}
	}
	lens := slices.Collect(maps.Keys(count))
	slices.SortFunc(lens, func(a, b int) int { return cmp.Or(cmp.Compare(count[b], count[a]), cmp.Compare(a, b)) })
	lens = lens[:min(len(lens), maxPreLens)]
	slices.Sort(lens)
	m.preLens = lens
	out := map[int]bool{}
	for _, l := range lens {
		out[l] = true
	}
	return out
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
// match some request of any host. It takes time and memory linear in the
// tree: a rule of n Host alternatives is one chain of n-1 Or nodes.
func hostsOf(n *node) *hostSet {
	switch n.kind {
	case kHost, kHostWild, kOr:
		s := &hostSet{}
		if !s.addOr(n) {
			return nil
		}
		return s
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
	}
	return nil
}

// addOr appends to h the hosts of n, an operand of a disjunction, walking
// nested Or nodes in place (so the hosts of a chain are copied once, in
// rule order); false when n may match some request of any host.
func (h *hostSet) addOr(n *node) bool {
	switch n.kind {
	case kHost:
		h.exact = append(h.exact, n.s)
		return true
	case kHostWild:
		h.wild = append(h.wild, n.s)
		return true
	case kOr:
		return h.addOr(n.l) && h.addOr(n.r)
	}
	s := hostsOf(n)
	if s == nil {
		return false
	}
	h.exact = append(h.exact, s.exact...)
	h.wild = append(h.wild, s.wild...)
	return true
}

// candidates fills ls with the lists of routes that may match in's host.
func (m *mux) candidates(in *input, ls *lists) {
	ls[0] = m.fallback
	h := in.host
	if h == "" {
		return
	}
	ls[1] = m.exact[h]
	if i := strings.IndexByte(h, '.'); i > 0 {
		ls[2] = m.wild[h[i+1:]]
	}
	if len(m.preLens) > 0 {
		rh := regexpHostOf(in, h)
		for i, l := range m.preLens {
			if l > len(rh) {
				break
			}
			ls[3+reDepth+i] = m.pre[rh[:l]]
		}
	}
	if len(m.re) == 0 || in.dot {
		return // an indexed suffix never ends with the dot regexpHost keeps
	}
	// The host's last 1..reDepth labels, each a proper suffix after a dot.
	end := len(h)
	for d := range reDepth {
		i := strings.LastIndexByte(h[:end], '.')
		if i <= 0 {
			return
		}
		ls[3+d] = m.re[h[i+1:]]
		end = i
	}
}

// lookup returns the first route in priority order whose rule matches, or
// nil. It takes no lock and does not allocate.
func (m *mux) lookup(in *input) *route {
	var ls lists
	m.candidates(in, &ls)
	h := in.host
	for {
		r := first(&ls)
		if r == nil {
			return nil
		}
		if r.guarded && !r.admits(regexpHostOf(in, h)) {
			continue
		}
		if r.m.match(in) {
			return r
		}
	}
}

// regexpHostOf is in.regexpHost without allocating for the usual host
// without a trailing dot (h is in.host).
func regexpHostOf(in *input, h string) string {
	if in.dot {
		return in.regexpHost()
	}
	return h
}

// first pops and returns the lowest-ranked head of the lists.
func first(ls *lists) *route {
	best := -1
	for i := range ls {
		if len(ls[i]) > 0 && (best < 0 || ls[i][0].rank < ls[best][0].rank) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	r := ls[best][0]
	ls[best] = ls[best][1:]
	return r
}
