package providers

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
)

// MergeParts merges every protocol the same way: same-named load balancers
// that agree but for their servers union their servers (HTTP by URL, TCP
// and UDP by address); anything else defined differently is left out
// with one problem naming the object and every part defining it; the
// parts are not modified.
func TestMergePartsEveryProtocol(t *testing.T) {
	part := func(from, httpURL, tcpAddr, udpAddr, rule string) Part[string] {
		c := config.New()
		c.HTTP.Services["web"] = &config.Service{LoadBalancer: &config.ServersLoadBalancer{Servers: []config.Server{{URL: httpURL}}}}
		c.HTTP.Routers["web"] = &config.Router{RouterCommon: config.RouterCommon{Rule: rule, Service: "web"}}
		c.EnsureTCP().Services["db"] = &config.TCPService{LoadBalancer: &config.TCPServersLoadBalancer{Servers: []config.TCPServer{{Address: tcpAddr}}}}
		c.TCP.Routers["db"] = &config.TCPRouter{RouterCommon: config.RouterCommon{Rule: "HostSNI(`*`)", Service: "db"}}
		c.EnsureUDP().Services["dns"] = &config.UDPService{LoadBalancer: &config.UDPServersLoadBalancer{Servers: []config.UDPServer{{Address: udpAddr}}}}
		c.EntryPoints = map[string]*config.DynamicEntryPoint{"redis": {Address: ":6379"}}
		return Part[string]{From: from, Config: c, EntryPoints: map[string]string{"redis": from + " label x"}}
	}
	parts := []Part[string]{
		part("a", "http://10.0.0.1:80", "10.0.0.1:5432", "10.0.0.1:53", "Host(`a`)"),
		part("b", "http://10.0.0.2:80", "10.0.0.2:5432", "10.0.0.2:53", "Host(`b`)"),
		part("c", "http://10.0.0.1:80", "10.0.0.1:5432", "10.0.0.3:53", "Host(`a`)"),
	}
	parts[2].Config.TCP.Services["db"].LoadBalancer.ServersTransport = "other" // c's db disagrees
	before, _ := json.Marshal(parts)

	cfg, origins, problems := MergeParts(parts, func(obj string, from []string) Problem {
		return Problem{Source: strings.Join(from, ","), Objects: []string{obj}}
	})

	urls := func(s []config.Server) (out []string) {
		for _, v := range s {
			out = append(out, v.URL)
		}
		return out
	}
	if got := urls(cfg.HTTP.Services["web"].LoadBalancer.Servers); !slices.Equal(got, []string{"http://10.0.0.1:80", "http://10.0.0.2:80"}) {
		t.Errorf("http servers %v", got)
	}
	var udp []string
	for _, s := range cfg.UDP.Services["dns"].LoadBalancer.Servers {
		udp = append(udp, s.Address)
	}
	if !slices.Equal(udp, []string{"10.0.0.1:53", "10.0.0.2:53", "10.0.0.3:53"}) {
		t.Errorf("udp servers %v", udp)
	}
	if cfg.HTTP.Routers["web"] != nil || cfg.TCP.Services["db"] != nil || cfg.TCP.Routers["db"] == nil {
		t.Errorf("conflicting router web and tcp service db must be left out, tcp router db kept: %+v %+v", cfg.HTTP.Routers, cfg.TCP)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Objects[0]+" by "+p.Source)
	}
	if want := []string{"router web by a,b,c", "tcp service db by a,b,c"}; !slices.Equal(got, want) {
		t.Errorf("problems %q, want %q", got, want)
	}
	if origins["entrypoint redis"] != "a label x" || cfg.EntryPoints["redis"] == nil {
		t.Errorf("origins %v, entrypoints %v", origins, cfg.EntryPoints)
	}
	if after, _ := json.Marshal(parts); string(after) != string(before) {
		t.Errorf("MergeParts modified its parts")
	}
}
