package gateway

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/config"
)

// precedence is a router's place in the Gateway API's match precedence
// (HTTPRouteRule, GRPCRouteRule), compared field by field, greater first:
//
//  1. the most characters in a matching non-wildcard hostname, then in a
//     matching hostname (HTTPRoute hostnames);
//  2. an Exact path match; then the longest PathPrefix or
//     RegularExpression (implementation-specific: ranked with prefixes by
//     length, a prefix first at equal length);
//  3. a method match;
//  4. the most header matches;
//  5. the most query parameter matches;
//  6. the oldest route (creationTimestamp), then namespace/name
//     alphabetically, then the rule's and match's order in the route.
type precedence struct {
	host      hostClass
	exactPath bool
	pathLen   int
	prefix    bool
	method    bool
	headers   int
	queries   int
	created   time.Time
	ns, name  string
	rule      int
	match     int
}

// compare orders a before b (negative) when a takes precedence.
func (a precedence) compare(b precedence) int {
	bool2 := func(x, y bool) int { // true first
		switch {
		case x == y:
			return 0
		case x:
			return -1
		}
		return 1
	}
	return cmp.Or(
		cmp.Compare(b.host.exact, a.host.exact),
		cmp.Compare(b.host.chars, a.host.chars),
		bool2(a.exactPath, b.exactPath),
		cmp.Compare(b.pathLen, a.pathLen),
		bool2(a.prefix, b.prefix),
		bool2(a.method, b.method),
		cmp.Compare(b.headers, a.headers),
		cmp.Compare(b.queries, a.queries),
		a.created.Compare(b.created),
		strings.Compare(a.ns, b.ns),
		strings.Compare(a.name, b.name),
		cmp.Compare(a.rule, b.rule),
		cmp.Compare(a.match, b.match),
	)
}

// rankedRouter is an HTTP router waiting for its priority.
type rankedRouter struct {
	name   string
	router *config.Router
	key    precedence
}

// assignPriorities gives the HTTP routers priorities N..1 in precedence
// order, so that Gantry tries them exactly as the specification orders
// matches (Gantry's routers: higher priority first).
func (t *translator) assignPriorities() {
	slices.SortStableFunc(t.routers, func(a, b rankedRouter) int {
		return cmp.Or(a.key.compare(b.key), strings.Compare(a.name, b.name))
	})
	n := len(t.routers)
	for i, r := range t.routers {
		r.router.Priority = n - i
	}
}
