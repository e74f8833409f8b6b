package router

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
)

// linearLookup is the reference: the first route in priority order (by
// less) whose rule matches, found by scanning every route.
func linearLookup(routes []*route, in *input) *route {
	for _, r := range routes {
		if r.m.match(in) {
			return r
		}
	}
	return nil
}

// randomRule builds a rule from a small vocabulary so that collisions
// between hosts, wildcards, paths and operators are frequent.
func randomRule(rng *rand.Rand, depth int) string {
	hosts := []string{"a.example", "b.example", "x.a.example", "A.Example", "c.test", "a.example."}
	leaf := func() string {
		switch rng.IntN(12) {
		case 0, 1, 2:
			return fmt.Sprintf("Host(`%s`)", hosts[rng.IntN(len(hosts))])
		case 3:
			return fmt.Sprintf("Host(`*.%s`)", []string{"example", "a.example", "test"}[rng.IntN(3)])
		case 4:
			return "Host(`*`)"
		case 5:
			res := []string{"^a\\.", "example$", "^[bc]", "^a\\.example$", "^[a-z]+\\.example$", "^x\\.[a-z]+\\.example$",
				"(?i)^A\\.EXAMPLE$", "\\.test$", "^[a-z.]+\\.a\\.example$", "^y\\.x\\.a\\.example$", "^a\\.example\\.$",
				"^(a|b)\\.example$", "^c\\.", "(?i)^[a-z]\\.EXAMPLE$", "^[a-z]+\\.x\\.a\\.example$"}
			return fmt.Sprintf("HostRegexp(`%s`)", res[rng.IntN(len(res))])
		case 6, 7:
			return fmt.Sprintf("PathPrefix(`/%s`)", []string{"", "a", "ab", "b"}[rng.IntN(4)])
		case 8:
			return fmt.Sprintf("Path(`/%s`)", []string{"a", "ab", "b/c"}[rng.IntN(3)])
		case 9:
			return fmt.Sprintf("Method(`%s`)", []string{"GET", "POST"}[rng.IntN(2)])
		case 10:
			return "Query(`q`, `1`)"
		default:
			return "Header(`X-T`, `1`)"
		}
	}
	if depth <= 0 || rng.IntN(3) == 0 {
		return leaf()
	}
	switch rng.IntN(5) {
	case 0, 1:
		return randomRule(rng, depth-1) + " && " + randomRule(rng, depth-1)
	case 2, 3:
		return "(" + randomRule(rng, depth-1) + " || " + randomRule(rng, depth-1) + ")"
	}
	return "!" + randomRule(rng, depth-1)
}

func randomRequest(rng *rand.Rand) *http.Request {
	hosts := []string{"a.example", "b.example", "x.a.example", "y.x.a.example", "A.EXAMPLE:8080", "c.test", "d.test", "example", "a.example.", "zzz"}
	paths := []string{"/", "/a", "/ab", "/ab/c", "/b/c", "/b%2Fc", "/x"}
	q := []string{"", "?q=1", "?q=2"}
	r := req([]string{"GET", "POST"}[rng.IntN(2)], "http://h"+paths[rng.IntN(len(paths))]+q[rng.IntN(len(q))])
	r.Host = hosts[rng.IntN(len(hosts))]
	if rng.IntN(5) == 0 {
		r.Host = ""
	}
	if rng.IntN(2) == 0 {
		r.Header.Set("X-T", "1")
	}
	return r
}

// TestLookupMatchesLinearScan is the differential test: on random route
// sets and requests, the indexed lookup returns exactly the route a linear
// scan in priority order returns.
func TestLookupMatchesLinearScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		n := 1 + rng.IntN(40)
		routes := make([]*route, 0, n)
		for i := range n {
			src := randomRule(rng, 3)
			c, err := compileRule(src, "")
			if err != nil {
				t.Fatalf("random rule %s: %v", src, err)
			}
			prio := 0
			if rng.IntN(3) == 0 {
				prio = rng.IntN(60) - 10
			}
			if prio == 0 {
				prio = len(src)
			}
			routes = append(routes, &route{name: fmt.Sprintf("r%02d@t", i), rule: src, priority: prio, m: c.root})
		}
		m := newMux(routes) // sorts routes in place, the reference order
		for range 200 {
			r := randomRequest(rng)
			in := newInput(r)
			got, want := m.lookup(&in), linearLookup(m.all, &in)
			if got != want {
				var rules []string
				for _, rt := range m.all {
					rules = append(rules, fmt.Sprintf("  %s p=%d %s", rt.name, rt.priority, rt.rule))
				}
				t.Fatalf("round %d, request host %q path %q: indexed lookup %v, linear scan %v\n%s", round, r.Host, r.URL.RequestURI(), nameOf(got), nameOf(want), strings.Join(rules, "\n"))
			}
		}
	}
}

func nameOf(r *route) string {
	if r == nil {
		return "<none>"
	}
	return r.name
}

func TestOrderTieBreakByName(t *testing.T) {
	tb := Compile(t.Context(), mergedOf(map[string]string{
		"b@x": "PathPrefix(`/`)",
		"a@y": "PathPrefix(`/`)",
		"c@x": "PathPrefix(`/`)",
	}), &nameBuilder{}, webOnly)
	if _, body := serve(t, tb, req("GET", "http://h/")); body != "a@y" {
		t.Errorf("equal priorities: got %s, want a@y (smallest qualified name)", body)
	}
}

// noopBuilder builds handlers that do nothing, for allocation tests and
// benchmarks.
type noopBuilder struct{ baseBuilder }

func (noopBuilder) Build(context.Context, string, *config.Router) (http.Handler, error) {
	return noop{}, nil
}

type noop struct{}

func (noop) ServeHTTP(http.ResponseWriter, *http.Request) {}

// discard is a ResponseWriter that keeps nothing.
type discard struct{ h http.Header }

func (d discard) Header() http.Header       { return d.h }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}

// Issue 23: with 10 000 HostRegexp routers ranked before the Host routers
// (their rules are longer), a request considers only the regexps whose
// literal prefix and domain its host has: a host the exact index answers
// meets none of them, a tenant's host only its own.
func TestHostRegexpRoutersAreIndexed(t *testing.T) {
	m := withRegexpRouters(mergedOf(map[string]string{
		"svc@b":   "Host(`svc.example.com`)",
		"other@b": "HostRegexp(`^[a-z]+\\.example\\.org$`)",
		"any@b":   "HostRegexp(`[0-9]x$`)", // no literal to index: considered for every host
	}), 10000)
	tb := Compile(t.Context(), m, noopBuilder{}, webOnly)
	for _, tc := range []struct {
		host, winner string
		candidates   int
	}{
		{"svc.example.com", "svc@b", 1},
		{"tenant42-abc.example.com", "re42@b", 1},
		{"tenant43-abc.example.net", "re43@b", 1},
		{"tenant42-abc.example.net", "", 0}, // tenant 42 is in example.com only, and any@b needs a final x
		{"www.example.org", "other@b", 1},
		{"a1x", "any@b", 1},
	} {
		x := tb.Explain("web", req("GET", "http://"+tc.host+"/"))
		if x.Winner != tc.winner || len(x.Candidates) != tc.candidates {
			t.Errorf("%s: winner %q after %d candidates %v; want %q after %d", tc.host, x.Winner, len(x.Candidates), x.Candidates, tc.winner, tc.candidates)
		}
	}
}
