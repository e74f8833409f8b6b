package router

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// loadCase decodes testdata/file and qualifies every name and reference
// with "@file", as the aggregator would.
func loadCase(t *testing.T, file string) *providers.Merged {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	f, _ := config.FormatOf(file)
	c, err := config.Decode(data, f)
	if err != nil {
		t.Fatalf("decode %s: %v", file, err)
	}
	q := func(s string) string {
		if s == "" || strings.Contains(s, "@") {
			return s
		}
		return s + "@file"
	}
	out := config.New()
	for n, r := range c.HTTP.Routers {
		r.Service = q(r.Service)
		for i := range r.Middlewares {
			r.Middlewares[i] = q(r.Middlewares[i])
		}
		out.HTTP.Routers[q(n)] = r
	}
	for n, s := range c.HTTP.Services {
		out.HTTP.Services[q(n)] = s
	}
	for n, m := range c.HTTP.Middlewares {
		out.HTTP.Middlewares[q(n)] = m
	}
	return &providers.Merged{Version: file, Config: out}
}

type caseRequest struct {
	target  string
	headers []string
	code    int
	router  string // body when code is 200
}

func checkRequests(t *testing.T, tb *Table, reqs []caseRequest) {
	t.Helper()
	for _, cr := range reqs {
		code, body := serve(t, tb, req("GET", cr.target, cr.headers...))
		want := cr.router
		if cr.code == 404 {
			want = "404 page not found"
		}
		if code != cr.code || body != want {
			t.Errorf("GET %s %v: got %d %q, want %d %q", cr.target, cr.headers, code, body, cr.code, want)
		}
	}
}

// Case 001: Host with two arguments fails only its own router, with an
// error naming the matcher and the argument count.
func TestCase001HostMultipleArgs(t *testing.T) {
	tb := Compile(context.Background(), loadCase(t, "case001-host-multiple-args.yml"), &nameBuilder{}, webOnly)
	st := tb.Report().Routers["site@file"]
	if st.Status != StatusDisabled || len(st.Errors) != 1 || st.Errors[0] != "rule: offset 0: Host: expected 1 argument, got 2" {
		t.Errorf("site@file: got %s %q, want disabled with the argument-count error", st.Status, st.Errors)
	}
	if s := tb.Report().Services["site@file"]; s.Status != StatusEnabled {
		t.Errorf("service site@file: got %s %v, want enabled (only the router is wrong)", s.Status, s.Errors)
	}
	checkRequests(t, tb, []caseRequest{
		{target: "http://example.com/", code: 404},
		{target: "http://www.example.com/", code: 404},
		{target: "http://other.example.org/", code: 200, router: "other@file"},
		{target: "http://v3.example.com/", code: 200, router: "site-v3@file"},
		{target: "http://www.v3.example.com/", code: 200, router: "site-v3@file"},
		{target: "http://v2.example.com/", code: 200, router: "site-v2@file"},
		{target: "http://www.v2.example.com/", code: 200, router: "site-v2@file"},
	})
	// The global default syntax v2 accepts the original rule.
	tb = Compile(context.Background(), loadCase(t, "case001-host-multiple-args.yml"), &nameBuilder{}, Options{EntryPoints: webOnly.EntryPoints, DefaultRuleSyntax: "v2"})
	checkRequests(t, tb, []caseRequest{
		{target: "http://www.example.com/", code: 200, router: "site@file"},
	})
}

// Case 002: v3 Path(`/route/{id}`) is literal; PathRegexp expresses the
// intent; v2 keeps the template meaning.
func TestCase002PathPlaceholderIsLiteral(t *testing.T) {
	tb := Compile(context.Background(), loadCase(t, "case002-path-placeholder.yml"), &nameBuilder{}, webOnly)
	checkRequests(t, tb, []caseRequest{
		{target: "http://api.example.com/route/10", code: 404},
		{target: "http://api.example.com/route/%7Bid%7D", code: 200, router: "templated@file"},
		{target: "http://regexp.example.com/route/10", code: 200, router: "regexp@file"},
		{target: "http://v2.example.com/route/10", code: 200, router: "legacy@file"},
	})
	st := tb.Report().Routers["templated@file"]
	if st.Status != StatusWarning || len(st.Errors) != 1 || !strings.Contains(st.Errors[0], "braces are literal") {
		t.Errorf("templated@file: got %s %q, want a warning about literal braces", st.Status, st.Errors)
	}
	if st := tb.Report().Routers["legacy@file"]; st.Status != StatusEnabled {
		t.Errorf("legacy@file: got %s %q, want enabled", st.Status, st.Errors)
	}
}

// Case 003: the v2 catch-all matches nothing in v3, regexps are
// unanchored, and v2 keeps placeholders.
func TestCase003HostRegexp(t *testing.T) {
	opts := Options{EntryPoints: []EntryPoint{{Name: "web", AsDefault: true}, {Name: "legacy"}}}
	tb := Compile(context.Background(), loadCase(t, "case003-hostregexp.yml"), &nameBuilder{}, opts)
	checkRequests(t, tb, []caseRequest{
		{target: "http://whoami.example.com/", code: 404},
		{target: "http://app1.a.example.com/", code: 200, router: "app1@file"},
		{target: "http://xapp1.a.example.com.evil.example/", code: 200, router: "app1@file"},
		{target: "http://app1zq.examplexcom/", code: 404},
	})
	w := serveOn(tb, "legacy", req("GET", "http://whoami.example.com/"))
	if w != "errors-v2@file" {
		t.Errorf("legacy entrypoint: got %q, want errors-v2@file (v2 placeholder)", w)
	}
	if st := tb.Report().Routers["errors@file"]; st.Status != StatusWarning {
		t.Errorf("errors@file: got %s %q, want a warning about the v2 placeholder", st.Status, st.Errors)
	}
}

func serveOn(tb *Table, ep string, r *http.Request) string {
	w := httptest.NewRecorder()
	tb.Handler(ep).ServeHTTP(w, r)
	return strings.TrimSpace(w.Body.String())
}

// Case 004: quoting rules, including YAML's own escaping layer.
func TestCase004Quoting(t *testing.T) {
	tb := Compile(context.Background(), loadCase(t, "case004-quoting.yml"), &nameBuilder{}, webOnly)
	good := []caseRequest{}
	for _, h := range []string{"a", "b", "y"} {
		name := map[string]string{"a": "a@file", "b": "b@file", "y": "yamlquoted@file"}[h]
		good = append(good,
			caseRequest{target: "http://" + h + ".example.com/", headers: []string{"X-Client-Net: 192.0.2.7"}, code: 200, router: name},
			caseRequest{target: "http://" + h + ".example.com/", headers: []string{"X-Client-Net: 192x0x2x7"}, code: 404})
	}
	checkRequests(t, tb, good)
	// A plain YAML scalar keeps both backslashes: the regexp is 192\\.0…,
	// a literal backslash, which the real address does not contain.
	checkRequests(t, tb, []caseRequest{{target: "http://p.example.com/", headers: []string{"X-Client-Net: 192.0.2.7"}, code: 404}})
	for name, want := range map[string]string{
		"c@file": "bad escape sequence",
		"d@file": "single quotes are not allowed",
		"e@file": "argument 1 must be quoted",
	} {
		st := tb.Report().Routers[name]
		if st.Status != StatusDisabled || len(st.Errors) == 0 || !strings.Contains(st.Errors[0], want) {
			t.Errorf("%s: got %s %q, want disabled with %q", name, st.Status, st.Errors, want)
		}
	}
	checkRequests(t, tb, []caseRequest{{target: "http://c.example.com/", headers: []string{"X-Client-Net: 192.0.2.7"}, code: 404}})
}

// Case 006: default priority is len(rule); an explicit priority replaces it.
func TestCase006PriorityByRuleLength(t *testing.T) {
	m := loadCase(t, "case006-priority.toml")
	tb := Compile(context.Background(), m, &nameBuilder{}, webOnly)
	for name, want := range map[string]int{"exact@file": 23, "wildcard@file": 32, "api@file": 44, "my@file": 17} {
		if got := tb.Report().Routers[name].Priority; got != want {
			t.Errorf("%s priority: got %d, want %d", name, got, want)
		}
	}
	checkRequests(t, tb, []caseRequest{
		{target: "http://app.example.com/", code: 200, router: "wildcard@file"},
		{target: "http://foo.example.com/my/x", code: 200, router: "api@file"},
	})
	m.Config.HTTP.Routers["wildcard@file"].Priority = 1
	tb = Compile(context.Background(), m, &nameBuilder{}, webOnly)
	checkRequests(t, tb, []caseRequest{{target: "http://app.example.com/", code: 200, router: "exact@file"}})
}

// Case 006 property: of two routers that both match, the one with the
// higher explicit priority wins, whatever the rule lengths and providers.
func TestCase006ExplicitPriorityWins(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	rules := []string{"PathPrefix(`/`)", "Host(`a.example`)", "HostRegexp(`^a\\.example$`) && PathPrefix(`/x`)", "Host(`*.example`) || Path(`/never`)", "Method(`GET`)"}
	for range 500 {
		p1 := rng.IntN(1000) - 500
		p2 := p1 - 1 - rng.IntN(100)
		n1 := fmt.Sprintf("r%d@%s", rng.IntN(100), []string{"docker", "file", "consul"}[rng.IntN(3)])
		n2 := fmt.Sprintf("q%d@%s", rng.IntN(100), []string{"docker", "file", "consul"}[rng.IntN(3)])
		m := mergedOf(map[string]string{n1: rules[rng.IntN(len(rules))], n2: rules[rng.IntN(len(rules))]})
		if p1 == 0 {
			p1 = config.MaxPriority // 0 would mean len(rule)
		}
		if p2 == 0 {
			p2 = -1000
		}
		m.Config.HTTP.Routers[n1].Priority, m.Config.HTTP.Routers[n2].Priority = p1, p2
		tb := Compile(t.Context(), m, &nameBuilder{}, webOnly)
		if _, body := serve(t, tb, req("GET", "http://a.example/x")); body != n1 {
			t.Fatalf("%s (p=%d) and %s (p=%d) both match: got %s", n1, p1, n2, p2, body)
		}
	}
}

// Case 005: host canonicalisation for routing (lower case, no port, IPv6
// brackets removed); Host tolerates a trailing dot both ways while
// HostRegexp sees it, as in Traefik; a port in Host() never matches and is
// a load-time warning; an upper-case-only HostRegexp can never match.
func TestCase005HostCanonical(t *testing.T) {
	tb := Compile(context.Background(), loadCase(t, "case005-host-canonical.yml"), &nameBuilder{}, webOnly)
	checkRequests(t, tb, []caseRequest{
		{target: "http://SMOKE-TESTS.apps.example.com/", code: 200, router: "a@file"},
		{target: "http://smoke-tests.apps.example.com:8443/", code: 200, router: "a@file"},
		{target: "http://smoke-tests.apps.example.com./", code: 404}, // HostRegexp sees the dot
		{target: "http://SMOKE-TESTS.apps.example.com/b", code: 200, router: "b@file"},
		{target: "http://smoke-tests.apps.example.com:8443/b", code: 200, router: "b@file"},
		{target: "http://smoke-tests.apps.example.com./b", code: 200, router: "b@file"},
		{target: "http://dotted.example/", code: 200, router: "dotted@file"},
		{target: "http://dotted.example./", code: 200, router: "dotted@file"},
		{target: "http://[2001:db8::1]:8080/", code: 200, router: "v6@file"},
		{target: "http://a.example.com/", code: 200, router: "wild@file"},
		{target: "http://a.b.example.com/", code: 404},
		{target: "http://example.com/", code: 404},
		{target: "http://port.example.net:8443/", code: 404},
		{target: "http://ABC.example.org/", code: 404},
	})
	st := tb.Report().Routers["withport@file"]
	if st.Status != StatusWarning || len(st.Errors) != 1 || !strings.Contains(st.Errors[0], "never matches: the request's host is compared without its port") {
		t.Errorf("withport@file: %s %q, want a warning about the port", st.Status, st.Errors)
	}
	if st := tb.Report().Routers["v6@file"]; st.Status != StatusEnabled {
		t.Errorf("v6@file: %s %q: an IPv6 literal is not a port", st.Status, st.Errors)
	}
}

// Case 007 (passes since before issue 15; kept as a regression test):
// non-ASCII in Host or HostRegexp is a load-time error naming the router;
// the punycode form matches what browsers send.
func TestCase007IDNHost(t *testing.T) {
	tb := Compile(context.Background(), loadCase(t, "case007-idn.yml"), &nameBuilder{}, webOnly)
	checkRequests(t, tb, []caseRequest{{target: "http://xn--bcher-kva.example/", code: 200, router: "p@file"}})
	for _, n := range []string{"u@file", "r@file"} {
		st := tb.Report().Routers[n]
		if st.Status != StatusDisabled || len(st.Errors) == 0 || !strings.Contains(st.Errors[0], "non-ASCII") {
			t.Errorf("%s: %s %q, want disabled for non-ASCII", n, st.Status, st.Errors)
		}
	}
}
