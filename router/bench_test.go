package router

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/gantry-proxy/gantry/providers"
)

// benchConfig returns n routers: half exact hosts, a quarter wildcard
// hosts, the rest host plus path prefix, and always the same four
// host-less regexp and path routers in the fallback list.
func benchConfig(n int) *providers.Merged {
	rules := map[string]string{
		"canary@b":  "HostRegexp(`^[a-z]+-canary\\.example\\.com$`)",
		"tenant@b":  "HostRegexp(`^t[0-9]+\\.example\\.io$`) && PathPrefix(`/api`)",
		"static@b":  "PathRegexp(`^/static/[a-z0-9]+\\.(css|js)$`)",
		"health@b":  "Path(`/healthz`)",
		"default@b": "PathPrefix(`/`)",
	}
	for i := 0; len(rules) < n+5; i++ {
		switch i % 4 {
		case 0, 1:
			rules[fmt.Sprintf("exact%d@b", i)] = fmt.Sprintf("Host(`svc%d.example.com`)", i)
		case 2:
			rules[fmt.Sprintf("wild%d@b", i)] = fmt.Sprintf("Host(`*.tenant%d.example.net`)", i)
		case 3:
			rules[fmt.Sprintf("prefix%d@b", i)] = fmt.Sprintf("Host(`api%d.example.org`) && PathPrefix(`/v%d/`)", i%97, i)
		}
	}
	m := mergedOf(rules)
	m.Config.HTTP.Routers["default@b"].Priority = 1
	return m
}

// benchRequests hits exact, wildcard, prefix, regexp and default routes,
// spread over the whole table.
func benchRequests(n int) []*http.Request {
	var rs []*http.Request
	for k := range 16 {
		i := (k * n / 16) &^ 3 // a multiple of 4, so i, i+2, i+3 are the three kinds
		rs = append(rs,
			req("GET", fmt.Sprintf("http://svc%d.example.com/", i)),
			req("GET", fmt.Sprintf("http://x.tenant%d.example.net/a", i+2)),
			req("GET", fmt.Sprintf("http://api%d.example.org/v%d/users", (i+3)%97, i+3)),
			req("GET", "http://blue-canary.example.com/"),
			req("GET", "http://t42.example.io/api/x"),
			req("GET", "http://unknown.example.com/static/app.js"),
			req("GET", "http://unknown.example.com/healthz"),
			req("GET", "http://unknown.example.com/"))
	}
	return rs
}

// withRegexpRouters adds n HostRegexp routers to m: tenants of the exact
// hosts' own domain (example.com), half of another one (example.net),
// each ranked before every Host router by its longer rule (issue 23).
func withRegexpRouters(m *providers.Merged, n int) *providers.Merged {
	rules := map[string]string{}
	for i := range n {
		d := "com"
		if i%2 == 1 {
			d = "net"
		}
		rules[fmt.Sprintf("re%d@b", i)] = fmt.Sprintf("HostRegexp(`^tenant%d-[a-z]+\\.example\\.%s$`)", i, d)
	}
	for name, r := range mergedOf(rules).Config.HTTP.Routers {
		m.Config.HTTP.Routers[name] = r
	}
	return m
}

// BenchmarkMatch routes requests through an entrypoint handler whose
// routers' handlers do nothing: the cost of lookup and matching. The
// regexp=10000 cases add 10 000 HostRegexp routers in the exact hosts'
// domain, ranked first: they cost a literal test each, not a regexp.
func BenchmarkMatch(b *testing.B) {
	for _, c := range []struct{ n, re int }{{10, 0}, {1000, 0}, {10000, 0}, {1000, 10000}} {
		n := c.n
		name := fmt.Sprintf("routers=%d", n)
		if c.re > 0 {
			name += fmt.Sprintf("/regexp=%d", c.re)
		}
		b.Run(name, func(b *testing.B) {
			tb := Compile(b.Context(), withRegexpRouters(benchConfig(n), c.re), noopBuilder{}, webOnly)
			if d := tb.Report().Count(StatusDisabled); d != 0 {
				b.Fatalf("%d routers disabled: %v", d, tb.Report().Problems())
			}
			rs := benchRequests(n)
			for _, r := range rs {
				if name, _ := tb.Lookup("web", r); name == "" {
					b.Fatalf("%s%s: no route", r.Host, r.URL.Path)
				}
			}
			h := tb.Handler("web")
			w := discard{h: http.Header{}}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				h.ServeHTTP(w, rs[i%len(rs)])
				i++
			}
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	m := benchConfig(10000)
	b.ReportAllocs()
	for b.Loop() {
		Compile(b.Context(), m, noopBuilder{}, webOnly)
	}
}

// BenchmarkSwapUnderLoad serves requests from every P while one goroutine
// keeps swapping between two compiled tables: the cost of Load on the
// request path when the pointer changes under it.
func BenchmarkSwapUnderLoad(b *testing.B) {
	tables := []*Table{
		Compile(b.Context(), benchConfig(1000), noopBuilder{}, webOnly),
		Compile(b.Context(), benchConfig(1000), noopBuilder{}, webOnly),
	}
	a := NewActive()
	a.Swap(tables[0])
	rs := benchRequests(1000)
	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				done <- n
				return
			default:
				a.Swap(tables[n%2])
				n++
			}
		}
	}()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		w := discard{h: http.Header{}}
		i := 0
		for pb.Next() {
			a.Load().Handler("web").ServeHTTP(w, rs[i%len(rs)])
			i++
		}
	})
	close(stop)
	b.ReportMetric(float64(<-done), "swaps")
}
