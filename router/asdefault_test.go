package router

import (
	"context"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// Case 059: routers without entryPoints go to the asDefault entrypoints,
// else to every entrypoint; never to "traefik" (the API) nor to a UDP
// one, and asDefault on those counts for nothing. UDP routers without
// entryPoints use every UDP entrypoint.
func TestDefaultEntryPointsSkipAPIAndUDP(t *testing.T) {
	c := config.New()
	c.HTTP.Services["s@file"] = &config.Service{LoadBalancer: &config.ServersLoadBalancer{}}
	c.HTTP.Routers["app@file"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Host(`app.example.com`)", Service: "s@file"}}
	tc := c.EnsureTCP()
	tc.Services["t@file"] = &config.TCPService{LoadBalancer: &config.TCPServersLoadBalancer{Servers: []config.TCPServer{{Address: "127.0.0.1:1"}}}}
	tc.Routers["db@file"] = &config.TCPRouter{RouterCommon: config.RouterCommon{Rule: "HostSNI(`db.example.com`)", Service: "t@file"}, TLS: &config.RouterTCPTLSConfig{Passthrough: true}}
	uc := c.EnsureUDP()
	uc.Services["u@file"] = &config.UDPService{LoadBalancer: &config.UDPServersLoadBalancer{Servers: []config.UDPServer{{Address: "127.0.0.1:53"}}}}
	uc.Routers["dns@file"] = &config.UDPRouter{Service: "u@file"}
	eps := func(marked ...string) Options {
		var o Options
		for _, n := range []string{"web", "admin", "metrics", "traefik", "dns", "dns2"} {
			e := EntryPoint{Name: n, UDP: strings.HasPrefix(n, "dns")}
			for _, m := range marked {
				e.AsDefault = e.AsDefault || m == n
			}
			o.EntryPoints = append(o.EntryPoints, e)
		}
		return o
	}
	for variant, c2 := range map[string]struct {
		opts Options
		want string
	}{
		"A web asDefault":  {eps("web"), "web"},
		"B none":           {eps(), "admin,metrics,web"},
		"C only dns (UDP)": {eps("dns"), "admin,metrics,web"},
		"D only traefik":   {eps("traefik"), "admin,metrics,web"},
		"web and traefik":  {eps("web", "traefik"), "web"},
	} {
		tbl := Compile(context.Background(), &providers.Merged{Config: c}, tcpFake{}, c2.opts)
		rep := tbl.Report()
		if got := strings.Join(rep.Routers["app@file"].Using, ","); got != c2.want {
			t.Errorf("%s: HTTP router on %s, want %s", variant, got, c2.want)
		}
		if got := strings.Join(rep.TCPRouters["db@file"].Using, ","); got != c2.want {
			t.Errorf("%s: TCP router on %s, want %s", variant, got, c2.want)
		}
		if got := strings.Join(rep.UDPRouters["dns@file"].Using, ","); got != "dns,dns2" {
			t.Errorf("%s: UDP router on %s, want dns,dns2", variant, got)
		}
		if tbl.TCP("traefik") != nil {
			t.Errorf("%s: a TCP route on the traefik entrypoint", variant)
		}
		if name, _ := tbl.Lookup("traefik", req("GET", "http://app.example.com/")); name != "" {
			t.Errorf("%s: app.example.com routed on the traefik entrypoint to %s", variant, name)
		}
	}
}
