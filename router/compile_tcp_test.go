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

type tcpFake struct{}

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
	c.HTTP.Routers["web@file"] = &config.Router{Rule: "Host(`web.test`)", Service: "s@file", TLS: &config.RouterTLSConfig{}}
	c.HTTP.Services["s@file"] = &config.Service{LoadBalancer: &config.ServersLoadBalancer{}}
	tc := c.EnsureTCP()
	tc.Routers["db@file"] = &config.TCPRouter{Rule: "HostSNI(`db.test`)", Service: "db@file", TLS: &config.RouterTCPTLSConfig{Passthrough: true}}
	tc.Routers["all@file"] = &config.TCPRouter{Rule: "HostSNI(`*`)", Service: "db@file", EntryPoints: []string{"redis"}}
	tc.Routers["onudp@file"] = &config.TCPRouter{Rule: "HostSNI(`*`)", Service: "db@file", EntryPoints: []string{"dns"}}
	tc.Routers["nosvc@file"] = &config.TCPRouter{Rule: "HostSNI(`*`)", Service: "missing@file"}
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
