package router

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// failingBuilder fails the routers whose service or middleware is in bad,
// wrapping an *ObjectError as dataplane does.
type failingBuilder struct {
	nameBuilder
	bad map[string]string // object name -> kind
}

func (b *failingBuilder) Build(ctx context.Context, name string, r *config.Router) (http.Handler, error) {
	for _, obj := range append([]string{r.Service}, r.Middlewares...) {
		if kind, ok := b.bad[obj]; ok {
			return nil, fmt.Errorf("build router %s: %w", name, &ObjectError{Kind: kind, Name: obj, Err: errors.New("bad regexp")})
		}
	}
	return b.nameBuilder.Build(ctx, name, r)
}

func lb() *config.Service {
	return &config.Service{LoadBalancer: &config.ServersLoadBalancer{Servers: []config.Server{{URL: "http://10.0.0.1:80"}}}}
}

func TestCompileReport(t *testing.T) {
	c := config.New()
	c.HTTP.Services = map[string]*config.Service{
		"api@docker":    lb(),
		"broken@file":   {}, // no kind: invalid
		"unused@file":   lb(),
		"builderr@file": lb(),
	}
	c.HTTP.Middlewares = map[string]*config.Middleware{
		"strip@file": {StripPrefix: &config.StripPrefix{Prefixes: []string{"/a"}}},
		"bad@file":   {Compress: &config.Compress{}},
	}
	c.HTTP.Routers = map[string]*config.Router{
		"ok@docker":        {RouterCommon: config.RouterCommon{Rule: "Host(`ok.example`)", Service: "api@docker", Middlewares: []string{"strip@file"}}},
		"badrule@docker":   {RouterCommon: config.RouterCommon{Rule: "Host(`a`, `b`)", Service: "api@docker"}},
		"nosvc@docker":     {RouterCommon: config.RouterCommon{Rule: "Host(`n.example`)", Service: "missing@docker"}},
		"nomw@docker":      {RouterCommon: config.RouterCommon{Rule: "Host(`m.example`)", Service: "api@docker", Middlewares: []string{"gone@file"}}},
		"usesbroken@file":  {RouterCommon: config.RouterCommon{Rule: "Host(`b.example`)", Service: "broken@file"}},
		"builderr@file":    {RouterCommon: config.RouterCommon{Rule: "Host(`e.example`)", Service: "builderr@file"}},
		"badmw@file":       {RouterCommon: config.RouterCommon{Rule: "Host(`w.example`)", Service: "api@docker", Middlewares: []string{"bad@file"}}},
		"someeps@file":     {RouterCommon: config.RouterCommon{Rule: "Host(`s.example`)", Service: "api@docker", EntryPoints: []string{"web", "nope"}}},
		"noeps@file":       {RouterCommon: config.RouterCommon{Rule: "Host(`x.example`)", Service: "api@docker", EntryPoints: []string{"nope"}}},
		"toohigh@file":     {RouterCommon: config.RouterCommon{Rule: "Host(`h.example`)", Service: "api@docker", Priority: config.MaxPriority + 1}},
		"nil@file":         nil,
		"internal@file":    {RouterCommon: config.RouterCommon{Rule: "Host(`i.example`)", Service: "api@internal"}},
		"emptyrule@file":   {RouterCommon: config.RouterCommon{Service: "api@docker"}},
		"sortedusers@file": {RouterCommon: config.RouterCommon{Rule: "Host(`u.example`)", Service: "unused@file", EntryPoints: []string{"web"}}},
	}
	delete(c.HTTP.Routers, "sortedusers@file") // keep unused@file unused
	b := &failingBuilder{bad: map[string]string{"builderr@file": "service", "bad@file": "middleware"}}
	tb := Compile(t.Context(), &providers.Merged{Version: "v1", Config: c}, b, Options{EntryPoints: []EntryPoint{{Name: "web"}, {Name: "websecure"}}})
	rep := tb.Report()
	type rs struct {
		Status string
		Err    string
	}
	got := map[string]rs{}
	for n, s := range rep.Routers {
		got[n] = rs{s.Status, strings.Join(s.Errors, " | ")}
	}
	want := map[string]rs{
		"ok@docker":       {StatusEnabled, ""},
		"badrule@docker":  {StatusDisabled, "rule: offset 0: Host: expected 1 argument, got 2"},
		"nosvc@docker":    {StatusDisabled, `service "missing@docker" does not exist`},
		"nomw@docker":     {StatusDisabled, `middleware "gone@file" does not exist`},
		"usesbroken@file": {StatusDisabled, `service "broken@file" is disabled: no kind set; want one of loadBalancer, highestRandomWeight, weighted, mirroring, failover`},
		"builderr@file":   {StatusDisabled, "build router builderr@file: service builderr@file: bad regexp"},
		"badmw@file":      {StatusDisabled, "build router badmw@file: middleware bad@file: bad regexp"},
		"someeps@file":    {StatusWarning, `entrypoint "nope" does not exist`},
		"noeps@file":      {StatusDisabled, `entrypoint "nope" does not exist | no valid entrypoint`},
		"toohigh@file":    {StatusDisabled, fmt.Sprintf("priority: %d is above the maximum %d", config.MaxPriority+1, config.MaxPriority)},
		"nil@file":        {StatusDisabled, "empty definition"},
		"internal@file":   {StatusEnabled, ""},
		"emptyrule@file":  {StatusDisabled, "rule: empty; a router needs a rule"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("router statuses (-want +got):\n%s", d)
	}
	objs := func(m map[string]*ObjectStatus) map[string]string {
		out := map[string]string{}
		for n, s := range m {
			out[n] = s.Status + " [" + strings.Join(s.UsedBy, ",") + "] " + strings.Join(s.Errors, " | ")
		}
		return out
	}
	wantSvc := map[string]string{
		"api@docker":    "enabled [badmw@file,badrule@docker,emptyrule@file,noeps@file,nomw@docker,ok@docker,someeps@file,toohigh@file] ",
		"broken@file":   "disabled [usesbroken@file] no kind set; want one of loadBalancer, highestRandomWeight, weighted, mirroring, failover",
		"unused@file":   "enabled [] ",
		"builderr@file": "disabled [builderr@file] bad regexp",
	}
	if d := cmp.Diff(wantSvc, objs(rep.Services)); d != "" {
		t.Errorf("services (-want +got):\n%s", d)
	}
	wantMw := map[string]string{
		"strip@file": "enabled [ok@docker] ",
		"bad@file":   "disabled [badmw@file] bad regexp",
	}
	if d := cmp.Diff(wantMw, objs(rep.Middlewares)); d != "" {
		t.Errorf("middlewares (-want +got):\n%s", d)
	}
	if st := rep.Routers["ok@docker"]; !slices.Equal(st.Using, []string{"web", "websecure"}) || st.Priority != len("Host(`ok.example`)") {
		t.Errorf("ok@docker: using %v priority %d, want [web websecure] and len(rule)", st.Using, st.Priority)
	}
	if st := rep.Routers["someeps@file"]; !slices.Equal(st.Using, []string{"web"}) || !slices.Equal(st.EntryPoints, []string{"web", "nope"}) {
		t.Errorf("someeps@file: using %v entryPoints %v", st.Using, st.EntryPoints)
	}
	// The failure is isolated: the good router serves, the broken ones 404.
	checkRequests(t, tb, []caseRequest{
		{target: "http://ok.example/", code: 200, router: "ok@docker"},
		{target: "http://s.example/", code: 200, router: "someeps@file"},
		{target: "http://i.example/", code: 200, router: "internal@file"},
		{target: "http://e.example/", code: 404},
		{target: "http://b.example/", code: 404},
	})
	// Built once per router, in name order, only for routers that passed the checks.
	if want := []string{"internal@file", "ok@docker", "someeps@file"}; !slices.Equal(b.built, want) {
		t.Errorf("built %v, want %v", b.built, want)
	}
	if tb.Version() != "v1" || tb.Merged().Config != c {
		t.Errorf("version %q / merged not kept", tb.Version())
	}
	if p := rep.Problems(); len(p) != 15 || !strings.HasPrefix(p[0], "middleware bad@file: ") {
		t.Errorf("problems: %d %q", len(p), p)
	}
	if n := rep.Count(StatusDisabled); n != 10 {
		t.Errorf("disabled count %d, want 10", n)
	}
}

func TestDefaultEntryPoints(t *testing.T) {
	m := mergedOf(map[string]string{"r@t": "PathPrefix(`/`)"})
	tests := []struct {
		name string
		eps  []EntryPoint
		want []string
	}{
		{"no asDefault: all", []EntryPoint{{Name: "web"}, {Name: "admin"}}, []string{"admin", "web"}},
		{"asDefault only", []EntryPoint{{Name: "web", AsDefault: true}, {Name: "admin"}}, []string{"web"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := Compile(t.Context(), m, &nameBuilder{}, Options{EntryPoints: tt.eps})
			if got := tb.Report().Routers["r@t"].Using; !slices.Equal(got, tt.want) {
				t.Errorf("using %v, want %v", got, tt.want)
			}
			for _, ep := range tt.eps {
				code := serveCode(tb, ep.Name, req("GET", "http://h/"))
				if want := map[bool]int{true: 200, false: 404}[slices.Contains(tt.want, ep.Name)]; code != want {
					t.Errorf("entrypoint %s: got %d, want %d", ep.Name, code, want)
				}
			}
		})
	}
	tb := Compile(t.Context(), m, &nameBuilder{}, Options{})
	if st := tb.Report().Routers["r@t"]; st.Status != StatusDisabled || st.Errors[0] != "no entrypoint configured" {
		t.Errorf("no entrypoints: %s %q", st.Status, st.Errors)
	}
}

func serveCode(tb *Table, ep string, r *http.Request) int {
	w := &codeRecorder{discard: discard{h: http.Header{}}, code: 200}
	tb.Handler(ep).ServeHTTP(w, r)
	return w.code
}

type codeRecorder struct {
	discard
	code int
}

func (c *codeRecorder) WriteHeader(code int) { c.code = code }

// Routers with a tls block serve only TLS requests, others only plain ones.
func TestTLSDispatch(t *testing.T) {
	m := mergedOf(map[string]string{"plain@t": "Host(`a.example`)", "secure@t": "Host(`a.example`)"})
	m.Config.HTTP.Routers["secure@t"].TLS = &config.RouterTLSConfig{}
	tb := Compile(t.Context(), m, &nameBuilder{}, webOnly)
	plain := req("GET", "http://a.example/")
	secure := req("GET", "https://a.example/")
	if _, body := serve(t, tb, plain); body != "plain@t" {
		t.Errorf("plain request: got %s, want plain@t", body)
	}
	if _, body := serve(t, tb, secure); body != "secure@t" {
		t.Errorf("TLS request: got %s, want secure@t", body)
	}
	delete(m.Config.HTTP.Routers, "plain@t")
	tb = Compile(t.Context(), m, &nameBuilder{}, webOnly)
	if code, _ := serve(t, tb, plain); code != 404 {
		t.Errorf("plain request with only a TLS router: got %d, want 404", code)
	}
}

type tlsBuilder struct {
	nameBuilder
	got  *config.TLSConfiguration
	cert *tls.Certificate
}

func (b *tlsBuilder) BuildTLS(_ context.Context, c *config.TLSConfiguration, _ TLSHosts) (func(*tls.ClientHelloInfo) (*tls.Certificate, error), []error) {
	b.got = c
	return func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return b.cert, nil }, []error{errors.New("certificate /x.pem: no such file")}
}

func TestCertificate(t *testing.T) {
	m := mergedOf(nil)
	m.Config.TLS.Options["default"] = &config.TLSOptions{MinVersion: "VersionTLS12"}
	b := &tlsBuilder{cert: &tls.Certificate{}}
	tb := Compile(t.Context(), m, b, webOnly)
	if b.got != m.Config.TLS {
		t.Errorf("BuildTLS got %v, want the merged TLS section", b.got)
	}
	if c, err := tb.Certificate(&tls.ClientHelloInfo{ServerName: "a"}); c != b.cert || err != nil {
		t.Errorf("Certificate = %v, %v; want the builder's", c, err)
	}
	if want := []string{"certificate /x.pem: no such file"}; !slices.Equal(tb.Report().TLS, want) {
		t.Errorf("report TLS %q, want %q", tb.Report().TLS, want)
	}
	tb = Compile(t.Context(), m, &nameBuilder{}, webOnly)
	if c, err := tb.Certificate(&tls.ClientHelloInfo{}); c != nil || err != nil {
		t.Errorf("without a certificate source: %v, %v; want nil, nil", c, err)
	}
}

func TestCompileNilAndEmpty(t *testing.T) {
	for _, m := range []*providers.Merged{nil, {Version: "x"}, {Config: &config.Configuration{}}} {
		tb := Compile(t.Context(), m, &nameBuilder{}, webOnly)
		if tb.Merged() == nil || tb.Merged().Config == nil || tb.Report() == nil {
			t.Fatalf("Compile(%v): nil merged or report", m)
		}
		if code := serveCode(tb, "web", req("GET", "http://h/")); code != 404 {
			t.Errorf("empty table: got %d, want 404", code)
		}
	}
	tb := Compile(t.Context(), mergedOf(nil), &nameBuilder{}, webOnly)
	if code := serveCode(tb, "unknown", req("GET", "http://h/")); code != 404 {
		t.Errorf("unknown entrypoint: got %d, want 404", code)
	}
}

// A RawPath that does not decode to Path is ignored (url.URL.EscapedPath),
// so the routing path can never hold a malformed escape.
func TestInvalidRawPathFallsBackToPath(t *testing.T) {
	r := &http.Request{URL: &url.URL{Path: "/a b%", RawPath: "/x%4"}}
	if got := routingPath(r); got != "/a b%25" {
		t.Errorf("routingPath = %q, want %q", got, "/a b%25")
	}
}

func TestExplain(t *testing.T) {
	tb := Compile(t.Context(), mergedOf(map[string]string{
		"api@t":   "Host(`a.example`) && PathPrefix(`/api`)",
		"other@t": "Host(`b.example`)",
		"any@t":   "PathPrefix(`/`) && !Method(`DELETE`)",
	}), &nameBuilder{}, webOnly)
	x := tb.Explain("web", req("GET", "http://A.example:8080/web"))
	if x.Winner != "any@t" || x.Host != "a.example" || x.Path != "/web" {
		t.Fatalf("winner %q host %q path %q", x.Winner, x.Host, x.Path)
	}
	want := []Candidate{
		{Router: "api@t", Rule: "Host(`a.example`) && PathPrefix(`/api`)", Priority: 39, Matched: false, Reason: "PathPrefix(`/api`) did not match path /web"},
		{Router: "any@t", Rule: "PathPrefix(`/`) && !Method(`DELETE`)", Priority: 36, Matched: true, Reason: "matched"},
	}
	if d := cmp.Diff(want, x.Candidates); d != "" {
		t.Errorf("candidates (-want +got):\n%s", d)
	}
	x = tb.Explain("web", req("DELETE", "http://c.example/"))
	if x.Winner != "" || len(x.Candidates) != 1 || x.Candidates[0].Reason != "negated: Method(`DELETE`) matched method DELETE" {
		t.Errorf("DELETE: %+v", x)
	}
	// The index rules out other@t (host b.example) for host b.example.com.
	x = tb.Explain("web", req("GET", "http://b.example.com/"))
	if x.Winner != "any@t" || len(x.Candidates) != 1 {
		t.Errorf("b.example.com: %+v", x)
	}
	if x := tb.Explain("nope", req("GET", "http://h/")); x.Error == "" {
		t.Errorf("unknown entrypoint: no error")
	}
}

func TestCompileNilBuilder(t *testing.T) {
	tb := Compile(t.Context(), mergedOf(map[string]string{"r@t": "PathPrefix(`/`)"}), nil, webOnly)
	if st := tb.Report().Routers["r@t"]; st.Status != StatusDisabled || st.Errors[0] != "no handler builder" {
		t.Errorf("nil builder: %s %q", st.Status, st.Errors)
	}
}
