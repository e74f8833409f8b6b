package router

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
)

// A router on several entrypoints keeps its priority on each of them: the
// routes of one entrypoint's mux are its own (issue 26, r1-r4). Every
// request is checked against a linear scan over the routers of that
// entrypoint in priority order.
func TestRouterOnSeveralEntryPointsKeepsItsPriority(t *testing.T) {
	type rt struct {
		rule string
		prio int
		eps  []string
	}
	routers := map[string]rt{
		"r1@t": {"Host(`x.com`)", 10, []string{"a", "b"}},
		"r2@t": {"PathPrefix(`/`)", 5, []string{"a"}},
		"r3@t": {"PathPrefix(`/b`)", 100, []string{"b"}},
		"r4@t": {"PathPrefix(`/c`)", 99, []string{"b"}},
		"r5@t": {"PathPrefix(`/d`)", 7, nil}, // no entryPoints: on a, b and c
		"r6@t": {"Host(`x.com`) && PathPrefix(`/c`)", 8, []string{"a", "c"}},
	}
	m := mergedOf(nil)
	for name, r := range routers {
		m.Config.HTTP.Routers[name] = &config.Router{RouterCommon: config.RouterCommon{Rule: r.rule, Priority: r.prio, EntryPoints: r.eps, Service: "svc@test"}}
	}
	opts := Options{EntryPoints: []EntryPoint{{Name: "a"}, {Name: "b"}, {Name: "c"}}}
	tb := Compile(t.Context(), m, &nameBuilder{}, opts)

	// linear is the reference: the first router on ep, by priority then
	// name, whose rule matches.
	linear := func(ep string, r *http.Request) string {
		var names []string
		for name, x := range routers {
			if len(x.eps) == 0 || slices.Contains(x.eps, ep) {
				names = append(names, name)
			}
		}
		slices.SortFunc(names, func(p, q string) int {
			if d := routers[q].prio - routers[p].prio; d != 0 {
				return d
			}
			return strings.Compare(p, q)
		})
		in := newInput(r)
		for _, n := range names {
			c, err := compileRule(routers[n].rule, "v3")
			if err != nil {
				t.Fatal(err)
			}
			if c.root.match(&in) {
				return n
			}
		}
		return ""
	}
	for _, ep := range []string{"a", "b", "c"} {
		for _, host := range []string{"x.com", "y.com"} {
			for _, path := range []string{"/", "/b", "/c", "/d", "/bx"} {
				r := req("GET", "http://"+host+path)
				got, _ := tb.Lookup(ep, r)
				if want := linear(ep, r); got != want {
					t.Errorf("entrypoint %s, %s%s: routed to %q, a linear scan gives %q", ep, host, path, got, want)
				}
			}
		}
	}
	// The repro in so many words: on a, x.com/ is r1 (10 > 5).
	if got, _ := tb.Lookup("a", req("GET", "http://x.com/")); got != "r1@t" {
		t.Errorf("entrypoint a, x.com/: got %q, want r1@t", got)
	}
}
