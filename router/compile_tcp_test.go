package router

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router/tcpmux"
)

type tcpFake struct{ baseBuilder }

func (tcpFake) Build(context.Context, string, *config.Router) (http.Handler, error) {
	return http.NotFoundHandler(), nil
}

type fakeTCP string

func (fakeTCP) ServeTCP(c *tcpmux.Conn) {}

func (tcpFake) BuildTCP(_ context.Context, name string, _ *config.TCPRouter) (tcpmux.Handler, error) {
	return fakeTCP(name), nil
}

type fakeUDP string

func (f fakeUDP) Pick() (string, error) { return string(f), nil }

func (tcpFake) BuildUDP(_ context.Context, name string, _ *config.UDPRouter) (UDPHandler, error) {
	return fakeUDP(name), nil
}

// TCP and UDP routers compile into the same Table as HTTP (one swap),
// each on entrypoints of its protocol, with Traefik's priorities and the
// HTTPS hosts of the entrypoint recorded for precedence.
func TestCompileTCPAndUDP(t *testing.T) {
	c := config.New()
	c.HTTP.Routers["web@file"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Host(`web.test`)", Service: "s@file"}, TLS: &config.RouterTLSConfig{}}
	c.HTTP.Services["s@file"] = &config.Service{LoadBalancer: &config.ServersLoadBalancer{}}
	tc := c.EnsureTCP()
	tc.Routers["db@file"] = &config.TCPRouter{RouterCommon: config.RouterCommon{Rule: "HostSNI(`db.test`)", Service: "db@file"}, TLS: &config.RouterTCPTLSConfig{Passthrough: true}}
	tc.Routers["all@file"] = &config.TCPRouter{RouterCommon: config.RouterCommon{Rule: "HostSNI(`*`)", Service: "db@file", EntryPoints: []string{"redis"}}}
	tc.Routers["onudp@file"] = &config.TCPRouter{RouterCommon: config.RouterCommon{Rule: "HostSNI(`*`)", Service: "db@file", EntryPoints: []string{"dns"}}}
	tc.Routers["nosvc@file"] = &config.TCPRouter{RouterCommon: config.RouterCommon{Rule: "HostSNI(`*`)", Service: "missing@file"}}
	tc.Services["db@file"] = &config.TCPService{LoadBalancer: &config.TCPServersLoadBalancer{Servers: []config.TCPServer{{Address: "127.0.0.1:5432"}}}}
	uc := c.EnsureUDP()
	uc.Routers["a@file"] = &config.UDPRouter{Service: "u@file"}
	uc.Routers["b@file"] = &config.UDPRouter{Service: "u@file", EntryPoints: []string{"dns"}}
	uc.Routers["c@file"] = &config.UDPRouter{Service: "u@file", EntryPoints: []string{"websecure"}}
	uc.Services["u@file"] = &config.UDPService{LoadBalancer: &config.UDPServersLoadBalancer{Servers: []config.UDPServer{{Address: "127.0.0.1:53"}}}}
	opts := Options{EntryPoints: []EntryPoint{{Name: "websecure"}, {Name: "redis"}, {Name: "dns", UDP: true}}}
	tbl := Compile(context.Background(), &providers.Merged{Config: c}, tcpFake{}, opts)
	rep := tbl.Report()

	if st := rep.Routers["web@file"]; strings.Join(st.Using, ",") != "redis,websecure" {
		t.Errorf("http router default entrypoints must skip UDP ones: %v", st.Using)
	}
	ws := tbl.TCP("websecure")
	if ws == nil || !ws.Has("db@file") || !ws.HTTPS || !ws.HTTPSHosts["web.test"] {
		t.Fatalf("websecure tcp table: %+v", ws)
	}
	if r := tbl.TCP("redis"); r == nil || !r.Has("all@file") || !r.Has("db@file") || !r.HTTPS {
		t.Errorf("redis tcp table: %+v", r)
	}
	if st := rep.TCPRouters["all@file"]; st.Priority != -1 || st.Status != StatusEnabled {
		t.Errorf("HostSNI(*) priority/status: %+v", st)
	}
	if st := rep.TCPRouters["onudp@file"]; st.Status != StatusDisabled || !strings.Contains(strings.Join(st.Errors, ";"), "not a TCP entrypoint") {
		t.Errorf("tcp router on a udp entrypoint: %+v", st)
	}
	if st := rep.TCPRouters["nosvc@file"]; st.Status != StatusDisabled || !strings.Contains(strings.Join(st.Errors, ";"), `tcp service "missing@file" does not exist`) {
		t.Errorf("missing service: %+v", st)
	}
	if st := rep.TCPServices["db@file"]; strings.Join(st.UsedBy, ",") != "all@file,db@file,onudp@file" {
		t.Errorf("usedBy: %v", st.UsedBy)
	}
	if u := tbl.UDP("dns"); u == nil || u.Name != "a@file" {
		t.Errorf("udp dns: %+v", u)
	}
	// The counts "config applied" and "gantry validate" print include the
	// TCP and UDP routers: onudp, nosvc, b and c are disabled.
	if n, d := rep.RouterCount(), rep.Count(StatusDisabled); n != 8 || d != 4 {
		t.Errorf("routers %d, disabled %d; want 8 and 4 (HTTP, TCP and UDP)", n, d)
	}
	if st := rep.UDPRouters["b@file"]; st.Status != StatusDisabled || !strings.Contains(strings.Join(st.Errors, ";"), "already served by UDP router a@file") {
		t.Errorf("second udp router: %+v", st)
	}
	if st := rep.UDPRouters["c@file"]; st.Status != StatusDisabled {
		t.Errorf("udp router on a tcp entrypoint: %+v", st)
	}
	if tbl.TCP("dns") != nil || tbl.UDP("websecure") != nil {
		t.Error("protocol mix-up")
	}
}

// A TCP or UDP router naming a missing or disabled service or middleware is
// disabled with an error naming it; the objects it names list it in usedBy.
func TestTCPUDPReferences(t *testing.T) {
	c := config.New()
	tc := c.EnsureTCP()
	tc.Routers["nomw@file"] = &config.TCPRouter{RouterCommon: config.RouterCommon{Rule: "HostSNI(`*`)", Service: "db@file", Middlewares: []string{"gone@file", "lan@file"}}}
	tc.Routers["badsvc@file"] = &config.TCPRouter{RouterCommon: config.RouterCommon{Rule: "HostSNI(`*`)", Service: "broken@file", Middlewares: []string{"badmw@file"}}}
	tc.Services["db@file"] = &config.TCPService{LoadBalancer: &config.TCPServersLoadBalancer{Servers: []config.TCPServer{{Address: "127.0.0.1:5432"}}}}
	tc.Services["broken@file"] = &config.TCPService{}
	tc.Middlewares["lan@file"] = &config.TCPMiddleware{IPAllowList: &config.TCPIPAllowList{SourceRange: []string{"127.0.0.1/32"}}}
	tc.Middlewares["badmw@file"] = &config.TCPMiddleware{}
	uc := c.EnsureUDP()
	uc.Routers["nosvc@file"] = &config.UDPRouter{Service: "missing@file"}
	uc.Routers["badsvc@file"] = &config.UDPRouter{Service: "ubroken@file"}
	uc.Services["ubroken@file"] = &config.UDPService{}
	// Invalid routers (config.Validate) are disabled with the field named.
	tc.Routers["norule@file"] = &config.TCPRouter{RouterCommon: config.RouterCommon{Service: "db@file"}}
	uc.Routers["empty@file"] = &config.UDPRouter{}
	opts := Options{EntryPoints: []EntryPoint{{Name: "db"}, {Name: "dns", UDP: true}}}
	rep := Compile(context.Background(), &providers.Merged{Config: c}, tcpFake{}, opts).Report()

	errs := func(st *RouterStatus) string { return strings.Join(st.Errors, " | ") }
	for _, tt := range []struct {
		st   *RouterStatus
		want []string
	}{
		{rep.TCPRouters["nomw@file"], []string{`tcp middleware "gone@file" does not exist`}},
		{rep.TCPRouters["badsvc@file"], []string{`tcp service "broken@file" is disabled: no kind set`, `tcp middleware "badmw@file" is disabled: no kind set`}},
		{rep.UDPRouters["nosvc@file"], []string{`udp service "missing@file" does not exist`}},
		{rep.UDPRouters["badsvc@file"], []string{`udp service "ubroken@file" is disabled: no kind set`}},
		{rep.TCPRouters["norule@file"], []string{"rule: empty; a TCP router needs a rule"}},
		{rep.UDPRouters["empty@file"], []string{"service: empty; a router needs a service"}},
	} {
		if tt.st == nil || tt.st.Status != StatusDisabled {
			t.Errorf("%+v: want disabled", tt.st)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(errs(tt.st), w) {
				t.Errorf("errors %q lack %q", errs(tt.st), w)
			}
		}
	}
	for name, want := range map[string]string{"lan@file": "nomw@file", "badmw@file": "badsvc@file"} {
		if got := strings.Join(rep.TCPMiddlewares[name].UsedBy, ","); got != want {
			t.Errorf("tcp middleware %s usedBy %q, want %q", name, got, want)
		}
	}
	if got := strings.Join(rep.UDPServices["ubroken@file"].UsedBy, ","); got != "badsvc@file" {
		t.Errorf("udp service usedBy %q", got)
	}
}

type nilTCPBuilder struct{ tcpFake }

func (nilTCPBuilder) BuildTCP(context.Context, string, *config.TCPRouter) (tcpmux.Handler, error) {
	return nil, nil
}

func (nilTCPBuilder) BuildUDP(context.Context, string, *config.UDPRouter) (UDPHandler, error) {
	return nil, nil
}

// A TCP or UDP builder that returns neither a handler nor an error
// disables the router with an error saying so.
func TestTCPUDPBuilderWithoutHandler(t *testing.T) {
	c := config.New()
	c.EnsureTCP().Routers["db@file"] = &config.TCPRouter{RouterCommon: config.RouterCommon{Rule: "HostSNI(`*`)", Service: "db@file"}}
	c.TCP.Services["db@file"] = &config.TCPService{LoadBalancer: &config.TCPServersLoadBalancer{Servers: []config.TCPServer{{Address: "127.0.0.1:5432"}}}}
	c.EnsureUDP().Routers["dns@file"] = &config.UDPRouter{Service: "dns@file"}
	c.UDP.Services["dns@file"] = &config.UDPService{LoadBalancer: &config.UDPServersLoadBalancer{Servers: []config.UDPServer{{Address: "127.0.0.1:53"}}}}
	opts := Options{EntryPoints: []EntryPoint{{Name: "db"}, {Name: "dns", UDP: true}}}
	rep := Compile(context.Background(), &providers.Merged{Config: c}, nilTCPBuilder{}, opts).Report()
	for _, st := range []*RouterStatus{rep.TCPRouters["db@file"], rep.UDPRouters["dns@file"]} {
		if st.Status != StatusDisabled || !strings.Contains(strings.Join(st.Errors, ";"), "builder returned no handler") {
			t.Errorf("router %+v: want disabled, builder returned no handler", st)
		}
	}
}
