package entrypoints

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane"
	"github.com/gantry-proxy/gantry/dataplane/udpproxy"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
)

func TestParseAllowed(t *testing.T) {
	good := []struct {
		entry string
		yes   []string
		no    []string
	}{
		{"8000-8099", []string{":8000", ":8099", "127.0.0.1:8050", "[::1]:8001/tcp"}, []string{":7999", ":8100", ":8000/udp"}},
		{"tcp:9000", []string{":9000", "10.0.0.1:9000/TCP"}, []string{":9001"}},
		{"udp:5300-5310", []string{":5300/udp", "127.0.0.1:5310/udp"}, []string{":5300", ":5311/udp"}},
		{"127.0.0.1:9000-9009", []string{"127.0.0.1:9005"}, []string{":9005", "127.0.0.2:9005", "[::1]:9005"}},
		{"udp:[::1]:53", []string{"[::1]:53/udp"}, []string{":53/udp", "[::1]:53"}},
	}
	for _, g := range good {
		rs, err := ParseAllowed([]string{g.entry})
		if err != nil || len(rs) != 1 {
			t.Fatalf("%q: %v", g.entry, err)
		}
		for _, a := range g.yes {
			pa, err := parseAddress(a)
			if err != nil || !rs[0].permits(pa) {
				t.Errorf("%q should permit %s (%v)", g.entry, a, err)
			}
		}
		for _, a := range g.no {
			pa, err := parseAddress(a)
			if err == nil && rs[0].permits(pa) {
				t.Errorf("%q should not permit %s", g.entry, a)
			}
		}
	}
	_, err := ParseAllowed([]string{"8000-8099", "0", "9000-8000", "host.example:80", "tcp:", "x-y", "70000"})
	for _, want := range []string{`allowed[1] "0"`, `allowed[2] "9000-8000": port range 9000-8000 is empty`, `allowed[3] "host.example:80"`, `allowed[4] "tcp:"`, `allowed[5] "x-y"`, `allowed[6] "70000"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "allowed[0]") {
		t.Errorf("a good entry reported: %v", err)
	}
	for _, bad := range []string{"", ":0", "localhost:8000", ":8000/sctp", ":http", "8000"} {
		if _, err := parseAddress(bad); err == nil {
			t.Errorf("address %q accepted", bad)
		}
	}
}

func TestCheckTemplate(t *testing.T) {
	if err := CheckTemplate(&static.EntryPoint{Transport: &static.EntryTransport{MaxConnections: 10}}); err != nil {
		t.Errorf("transport refused: %v", err)
	}
	err := CheckTemplate(&static.EntryPoint{Address: ":80", AsDefault: true, HTTP: &static.EntryHTTP{Middlewares: []string{"a@file"}}})
	for _, want := range []string{"address", "asDefault", "http.middlewares"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %s", err, want)
		}
	}
}

// freePort returns a loopback TCP port nothing listens on (it may be taken
// again by the time it is used; tests bind it at once).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func refused(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		c.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

func merged(eps map[string]string, origins map[string]string) *providers.Merged {
	c := config.New()
	c.EntryPoints = map[string]*config.DynamicEntryPoint{}
	for n, a := range eps {
		c.EntryPoints[n] = &config.DynamicEntryPoint{Address: a}
	}
	return &providers.Merged{Version: "v", Config: c, Origins: origins}
}

func problemFor(ps []providers.Problem, name string) *providers.Problem {
	for i, p := range ps {
		if len(p.Objects) == 1 && p.Objects[0] == "entrypoint "+name {
			return &ps[i]
		}
	}
	return nil
}

// Open binds allowed requests on a running dataplane.Server, refuses the
// others with a problem naming their source (no listener), settles two
// providers asking for one name, reports a busy port without stopping the
// rest; Retire closes what is no longer asked for; an address change moves
// the listener.
func TestOpenRetire(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	srv, err := dataplane.NewServer(log, router.NewActive(), map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	pa, pb, pc, out := freePort(t), freePort(t), freePort(t), freePort(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	pbusy := busy.Addr().(*net.TCPAddr).Port
	loop := func(p int) string { return "127.0.0.1:" + strconv.Itoa(p) }
	allowed := []string{"udp:127.0.0.1:" + strconv.Itoa(pc), "127.0.0.1:" + strconv.Itoa(pa), "127.0.0.1:" + strconv.Itoa(pb), "127.0.0.1:" + strconv.Itoa(pc), "127.0.0.1:" + strconv.Itoa(pbusy)}
	grace := config.Duration(100 * time.Millisecond)
	c := &static.Configuration{
		EntryPoints: map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0"}},
		DynamicEntryPoints: &static.DynamicEntryPoints{Allowed: allowed,
			Template: &static.EntryPoint{Transport: &static.EntryTransport{LifeCycle: &static.LifeCycle{GraceTimeOut: grace}}}},
	}
	mg, err := New(log, c, srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := merged(map[string]string{
		"app@docker":           loop(pa),
		"outside@docker":       loop(out),
		"web@docker":           ":9999",
		"clash@docker":         loop(pb),
		"clash@consulcatalog":  loop(pc),
		"busy@docker":          loop(pbusy),
		"dns@docker":           loop(pc) + "/udp",
		"same@docker":          loop(pb),
		"same@consulcatalog":   loop(pb),
		"bad@docker":           "localhost:80",
		"sp ace@docker":        loop(pc),
		"shared@consulcatalog": loop(pc),
	}, map[string]string{
		"entrypoint outside@docker": "container evil label gantry.entrypoints.outside.address",
	})
	eps, problems := mg.Open(context.Background(), m)
	got := map[string]bool{}
	for _, e := range eps {
		if !e.Dynamic {
			t.Errorf("entrypoint %s not marked Dynamic", e.Name)
		}
		got[e.Name] = true
	}
	if !got["app"] || !got["same"] || !got["shared"] || len(got) != 3 {
		t.Errorf("serving %v, want app, same and shared", got)
	}
	if refused(loop(pa)) || refused(loop(pb)) || refused(loop(pc)) {
		t.Errorf("a listener asked for is not open")
	}
	checks := []struct{ name, provider, source, msg string }{
		{"outside", "docker", "container evil label gantry.entrypoints.outside.address", "is outside dynamicEntryPoints.allowed"},
		{"web", "docker", "entrypoint web@docker", "is an entrypoint of the static configuration"},
		{"clash", "aggregator", "entrypoint clash@consulcatalog, entrypoint clash@docker", "asked for with different addresses"},
		{"busy", "docker", "entrypoint busy@docker", "address already in use"},
		{"dns", "docker", "entrypoint dns@docker", "UDP dynamic entrypoints are not served"},
		{"bad", "docker", "entrypoint bad@docker", "must be empty or an IP address"},
		{"sp ace", "docker", "entrypoint sp ace@docker", "the name must be"},
	}
	for _, ck := range checks {
		p := problemFor(problems, ck.name)
		if p == nil {
			t.Errorf("no problem for %s in %v", ck.name, problems)
			continue
		}
		if strings.Count(p.Message, "entrypoint "+ck.name+":") != 1 {
			t.Errorf("problem for %s: %q, want the entrypoint named once", ck.name, p.Message)
		}
		if p.Provider != ck.provider || p.Source != ck.source || !strings.Contains(p.Message, ck.msg) || !strings.HasSuffix(p.Message, "; not opened") || p.Severity != providers.SeverityError {
			t.Errorf("problem for %s: %+v, want provider %s, source %q, message with %q", ck.name, *p, ck.provider, ck.source, ck.msg)
		}
	}
	if len(problems) != len(checks) {
		t.Errorf("%d problems, want %d: %v", len(problems), len(checks), problems)
	}
	if !refused(loop(out)) {
		t.Errorf("the port outside the allow-list is listening")
	}
	mg.Retire() // everything asked for is kept
	if refused(loop(pa)) {
		t.Fatal("Retire closed a listener still asked for")
	}

	// app moves from pa to pb ("same" and "shared" are gone), busy frees.
	busy.Close()
	m2 := merged(map[string]string{"app@docker": loop(pb), "busy@docker": loop(pbusy)}, nil)
	_, problems = mg.Open(context.Background(), m2)
	if len(problems) != 0 {
		t.Errorf("problems after the port freed: %v", problems)
	}
	if !refused(loop(pa)) {
		t.Error("the old address of app still listens after its address changed")
	}
	if refused(loop(pb)) || refused(loop(pbusy)) {
		t.Error("the new address of app, or busy once free, is not open")
	}
	if refused(loop(pc)) {
		t.Error("shared closed before Retire: routes of the live table still name it")
	}
	mg.Retire()
	if !refused(loop(pc)) {
		t.Error("shared still listening after Retire")
	}
	if s := mg.Serving(); len(s) != 2 || s["app"] == nil || s["app"].Address != loop(pb) {
		t.Errorf("Serving() = %v", s)
	}
	mg.Open(context.Background(), merged(nil, nil))
	mg.Retire()
	if !refused(loop(pb)) || !refused(loop(pbusy)) {
		t.Error("listeners left open once nothing is asked for")
	}
	if got := srv.EntryPoints(); len(got) != 1 || got[0] != "web" {
		t.Errorf("server entrypoints at the end: %v, want [web]", got)
	}
}

// Without dynamicEntryPoints.allowed no request opens anything.
func TestNoAllowListOpensNothing(t *testing.T) {
	mg, err := New(slog.New(slog.DiscardHandler), &static.Configuration{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	eps, problems := mg.Open(context.Background(), merged(map[string]string{"x@docker": ":8001"}, nil))
	if len(eps) != 0 || len(problems) != 1 || !strings.Contains(problems[0].Message, "dynamicEntryPoints.allowed is not set") {
		t.Errorf("got %v %v", eps, problems)
	}
}

// replaceCounter counts ReplaceEntryPoint calls on a real Server.
type replaceCounter struct {
	*dataplane.Server
	replaced []string
}

func (r *replaceCounter) ReplaceEntryPoint(ctx context.Context, name string, cfg *static.EntryPoint, grace time.Duration) (<-chan struct{}, error) {
	r.replaced = append(r.replaced, name)
	return r.Server.ReplaceEntryPoint(ctx, name, cfg, grace)
}

// SetStatic (a live static reload): a changed template moves the open
// listeners to it on their port without a refusal; a narrowed allow-list
// closes what it no longer permits (after the swap, at Retire) with a
// problem; a bad allow-list changes nothing.
func TestSetStatic(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	srv, err := dataplane.NewServer(log, router.NewActive(), map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	pa, pb := freePort(t), freePort(t)
	loop := func(p int) string { return "127.0.0.1:" + strconv.Itoa(p) }
	static1 := &static.Configuration{DynamicEntryPoints: &static.DynamicEntryPoints{Allowed: []string{loop(pa), loop(pb)}}}
	rc := &replaceCounter{Server: srv}
	mg, err := New(log, static1, rc, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := merged(map[string]string{"a@docker": loop(pa), "b@docker": loop(pb)}, nil)
	if _, ps := mg.Open(context.Background(), m); len(ps) != 0 {
		t.Fatal(ps)
	}
	mg.Retire()
	static2 := &static.Configuration{DynamicEntryPoints: &static.DynamicEntryPoints{Allowed: []string{loop(pa)},
		Template: &static.EntryPoint{MaxHeaderBytes: 8192}}}
	if err := mg.SetStatic(&static.Configuration{DynamicEntryPoints: &static.DynamicEntryPoints{Allowed: []string{"0"}}}); err == nil {
		t.Fatal("a bad allow-list accepted")
	}
	if err := mg.SetStatic(static2); err != nil {
		t.Fatal(err)
	}
	eps, ps := mg.Open(context.Background(), m)
	if len(eps) != 1 || eps[0].Name != "a" || len(ps) != 1 || problemFor(ps, "b") == nil || !strings.Contains(ps[0].Message, "outside dynamicEntryPoints.allowed") {
		t.Errorf("after narrowing the allow-list: %v %v", eps, ps)
	}
	if len(rc.replaced) != 1 || rc.replaced[0] != "a" {
		t.Errorf("replaced %v, want [a] (its template changed)", rc.replaced)
	}
	if refused(loop(pa)) {
		t.Error("a refuses connections after moving to the new template")
	}
	if refused(loop(pb)) {
		t.Error("b closed before the swap")
	}
	mg.Retire()
	if !refused(loop(pb)) {
		t.Error("b, no longer allowed, still listens after Retire")
	}
	mg.Open(context.Background(), m)
	if len(rc.replaced) != 1 {
		t.Errorf("replaced again with an unchanged template: %v", rc.replaced)
	}
}

// A "/udp" request inside a udp: entry of the allow-list is served by the
// UDP server, marked UDP for the routers, and closed by Retire.
func TestUDPRequest(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	us := udpproxy.NewServer(log, router.NewActive(), nil)
	if err := us.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer us.Shutdown(context.Background())
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	_, port, _ := net.SplitHostPort(addr)
	mg, err := New(log, &static.Configuration{DynamicEntryPoints: &static.DynamicEntryPoints{Allowed: []string{"udp:127.0.0.1:" + port}}}, nil, us)
	if err != nil {
		t.Fatal(err)
	}
	eps, ps := mg.Open(context.Background(), merged(map[string]string{"dns@docker": addr + "/udp", "tcp@docker": addr}, nil))
	if len(eps) != 1 || eps[0].Name != "dns" || !eps[0].UDP || len(ps) != 1 || problemFor(ps, "tcp") == nil {
		t.Fatalf("got %v %v, want dns (UDP) served and tcp outside the allow-list", eps, ps)
	}
	if us.Addr("dns") == nil || us.Addr("dns").String() != addr {
		t.Errorf("UDP server: dns on %v, want %s", us.Addr("dns"), addr)
	}
	mg.Open(context.Background(), merged(nil, nil))
	mg.Retire()
	pc, err = net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatalf("%s still bound after Retire: %v", addr, err)
	}
	pc.Close()
}

// dynamicEntryPoints.maxEntryPoints: beyond it the requests already open
// keep their listeners and the new ones are problems.
func TestMaxEntryPoints(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	srv, err := dataplane.NewServer(log, router.NewActive(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	p := []int{freePort(t), freePort(t), freePort(t)}
	loop := func(i int) string { return "127.0.0.1:" + strconv.Itoa(p[i]) }
	mg, err := New(log, &static.Configuration{DynamicEntryPoints: &static.DynamicEntryPoints{
		Allowed: []string{"127.0.0.1:1-65535"}, MaxEntryPoints: 2}}, srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	mg.Open(context.Background(), merged(map[string]string{"z@docker": loop(0)}, nil))
	eps, ps := mg.Open(context.Background(), merged(map[string]string{"z@docker": loop(0), "a@docker": loop(1), "b@docker": loop(2)}, nil))
	if len(eps) != 2 || problemFor(ps, "b") == nil || !strings.Contains(problemFor(ps, "b").Message, "maxEntryPoints (2)") {
		t.Errorf("got %v %v, want z (open already) and a served, b refused", eps, ps)
	}
	if refused(loop(0)) || refused(loop(1)) || !refused(loop(2)) {
		t.Error("listeners do not match the limit")
	}
	if _, err := New(log, &static.Configuration{DynamicEntryPoints: &static.DynamicEntryPoints{MaxEntryPoints: -1}}, srv, nil); err == nil {
		t.Error("a negative maxEntryPoints accepted")
	}
}

// An address change to a port that cannot be bound leaves the entrypoint
// serving on its old address (still routed), with a warning saying so.
func TestMoveToBusyPortKeepsOld(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	srv, err := dataplane.NewServer(log, router.NewActive(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	old := "127.0.0.1:" + strconv.Itoa(freePort(t))
	mg, err := New(log, &static.Configuration{DynamicEntryPoints: &static.DynamicEntryPoints{Allowed: []string{"127.0.0.1:1-65535"}}}, srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	mg.Open(context.Background(), merged(map[string]string{"app@docker": old}, nil))
	eps, ps := mg.Open(context.Background(), merged(map[string]string{"app@docker": busy.Addr().String()}, nil))
	mg.Retire()
	if len(eps) != 1 || eps[0].Name != "app" {
		t.Errorf("entrypoints %v, want app still routed", eps)
	}
	if len(ps) != 1 || ps[0].Severity != providers.SeverityWarning || !strings.Contains(ps[0].Message, "keeps serving as "+old) {
		t.Errorf("problems %v, want a warning that app keeps serving as %s", ps, old)
	}
	if refused(old) {
		t.Error("the old address stopped listening after a failed move")
	}
}

// validName accepts exactly what the entrypoint name pattern
// ^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$ accepts.
func TestValidNameMatchesPattern(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$`)
	for _, s := range []string{"", "a", "Z9", "_a", "-a", "a_", "a-", "web", "dyn-8000", "a.b", "a b", "é", "a\n",
		strings.Repeat("a", 63), strings.Repeat("a", 64), "a" + strings.Repeat("_", 62), "a/b", "a:b"} {
		if got, want := validName(s), re.MatchString(s); got != want {
			t.Errorf("validName(%q) = %v, want %v", s, got, want)
		}
	}
}
