package router

import (
	"context"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router/tcpmux"
)

// Cases 045 and 051: TCP routers that can never be reached, or that make
// an entrypoint's HTTP routers unreachable, are warnings naming the
// routers on both sides; and the HTTPS side claims unknown SNIs only when
// one of its routers has no Host.
func TestTCPShadowWarningsAndCatchAll(t *testing.T) {
	c := config.New()
	c.HTTP.Services["s@file"] = &config.Service{LoadBalancer: &config.ServersLoadBalancer{}}
	c.HTTP.Routers["chat@file"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Host(`chat.example.com`)", Service: "s@file", EntryPoints: []string{"websecure"}}, TLS: &config.RouterTLSConfig{}}
	c.HTTP.Routers["wild@file"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Host(`*.w.example.com`)", Service: "s@file", EntryPoints: []string{"websecure"}}, TLS: &config.RouterTLSConfig{}}
	c.HTTP.Routers["legacy@file"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Host(`app.example.com`)", Service: "s@file", EntryPoints: []string{"web"}}}
	tc := c.EnsureTCP()
	tc.Services["t@file"] = &config.TCPService{LoadBalancer: &config.TCPServersLoadBalancer{Servers: []config.TCPServer{{Address: "127.0.0.1:1"}}}}
	pt := &config.RouterTCPTLSConfig{Passthrough: true}
	add := func(name, rule string, tls *config.RouterTCPTLSConfig, ep string) {
		tc.Routers[name] = &config.TCPRouter{RouterCommon: config.RouterCommon{Rule: rule, Service: "t@file", EntryPoints: []string{ep}}, TLS: tls}
	}
	add("xmpp@file", "HostSNI(`chat.example.com`) && ALPN(`xmpp-client`)", pt, "websecure")
	add("inwild@file", "HostSNI(`a.w.example.com`)", pt, "websecure")
	add("db@file", "HostSNI(`db.example.com`)", pt, "websecure")
	add("rest@file", "HostSNI(`*`)", pt, "websecure")
	add("mongo@file", "HostSNI(`mongo.example.com`)", nil, "mongo")
	add("smtp@file", "HostSNI(`*`)", nil, "web")
	opts := Options{EntryPoints: []EntryPoint{{Name: "websecure"}, {Name: "web"}, {Name: "mongo"}}}
	tbl := Compile(context.Background(), &providers.Merged{Config: c}, tcpFake{}, opts)
	rep := tbl.Report()
	for name, want := range map[string]string{
		"xmpp@file":   "never receives a connection on entrypoint websecure: HTTPS router chat@file serves the same host (chat.example.com)",
		"inwild@file": "HTTPS router wild@file serves the same host (a.w.example.com)",
		"mongo@file":  "HostSNI(`mongo.example.com`) never matches: the router has no tls block",
		"smtp@file":   "takes every connection of entrypoint web before any byte is read (it has no TLS routers), so its HTTP routers never receive a request: legacy@file",
	} {
		st := rep.TCPRouters[name]
		if st.Status != StatusWarning || !strings.Contains(strings.Join(st.Errors, "\n"), want) {
			t.Errorf("tcp router %s: %s %q, want a warning with %q", name, st.Status, st.Errors, want)
		}
	}
	for name, want := range map[string]string{
		"chat@file":   "so TCP router xmpp@file never receives one",
		"legacy@file": "TCP router smtp@file (HostSNI(`*`), no TLS) takes every connection there",
	} {
		st := rep.Routers[name]
		if st.Status != StatusWarning || !strings.Contains(strings.Join(st.Errors, "\n"), want) {
			t.Errorf("router %s: %s %q, want a warning with %q", name, st.Status, st.Errors, want)
		}
	}
	for _, name := range []string{"db@file", "rest@file"} {
		if st := rep.TCPRouters[name]; st.Status != StatusEnabled {
			t.Errorf("tcp router %s: %s %q, want enabled", name, st.Status, st.Errors)
		}
	}
	// No HTTPS router without a Host: HostSNI(*) takes unknown and
	// missing SNIs, the HTTPS routers their own hosts.
	ep := tbl.TCP("websecure")
	for sni, want := range map[string]string{"unknown.example.net": "rest@file", "": "rest@file", "db.example.com": "db@file", "chat.example.com": "", "x.w.example.com": ""} {
		d, r := ep.Route(&tcpmux.ConnData{ServerName: sni}, true)
		got := ""
		if d == tcpmux.ToTCP {
			got = r.Name
		}
		if got != want {
			t.Errorf("SNI %q: routed to %q, want %q (\"\": HTTPS)", sni, got, want)
		}
	}
	// An HTTPS router without a Host claims the unknown SNIs.
	c.HTTP.Routers["status@file"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "PathPrefix(`/status`)", Service: "s@file", EntryPoints: []string{"websecure"}}, TLS: &config.RouterTLSConfig{}}
	tbl = Compile(context.Background(), &providers.Merged{Config: c}, tcpFake{}, opts)
	if d, _ := tbl.TCP("websecure").Route(&tcpmux.ConnData{ServerName: "unknown.example.net"}, true); d != tcpmux.ToHTTP {
		t.Errorf("with an HTTPS router without Host, an unknown SNI went to TCP")
	}
}
