package providers

import (
	"slices"
	"testing"

	"github.com/gantry-proxy/gantry/config"
)

// L4Defaults completes TCP and UDP alike: a default service when none is
// declared, each load balancer's server from Server, a TCP router without
// a rule left out, a router without a service linked to the only service
// or left out; StrictLink refuses to link while a service failed.
func TestL4Defaults(t *testing.T) {
	for _, strict := range []bool{false, true} {
		cfg := &config.Configuration{}
		tc := cfg.EnsureTCP()
		tc.Routers["norule"] = &config.TCPRouter{}
		tc.Routers["db"] = &config.TCPRouter{RouterCommon: config.RouterCommon{Rule: "HostSNI(`*`)"}}
		tc.Services["good"] = &config.TCPService{LoadBalancer: &config.TCPServersLoadBalancer{Servers: []config.TCPServer{{Port: "5432"}, {Address: "x:1"}}}}
		tc.Services["bad"] = &config.TCPService{LoadBalancer: &config.TCPServersLoadBalancer{}}
		cfg.EnsureUDP().Routers["dns"] = &config.UDPRouter{}
		var said []string
		failed := map[string]bool{}
		L4Defaults{
			Service: "app",
			Failed:  func(kind string) bool { return failed[kind] },
			Server: func(proto, sn string, s L4Servers) bool {
				if sn == "bad" {
					failed[proto+" service"] = true
					return false
				}
				addr, port := s.First(true)
				*addr, *port = "10.0.0.1:"+*port, ""
				return true
			},
			StrictLink: strict,
			NoRule:     func(rn string) { said = append(said, "norule "+rn) },
			Unlinked: func(proto, rn string, n int, dropped []string) {
				said = append(said, proto+" unlinked "+rn+" "+slices.Concat(dropped, []string{"-"})[0])
			},
		}.Complete(cfg)

		want := []string{"norule norule"} // routers in name order
		if strict {
			want = []string{"tcp unlinked db bad", "norule norule"}
		}
		if !slices.Equal(said, want) {
			t.Errorf("strict %v: said %q, want %q", strict, said, want)
		}
		if tc.Services["bad"] != nil || tc.Routers["norule"] != nil {
			t.Errorf("strict %v: service bad and router norule must be left out: %+v", strict, tc)
		}
		if got := tc.Services["good"].LoadBalancer.Servers; len(got) != 1 || got[0].Address != "10.0.0.1:5432" {
			t.Errorf("strict %v: good servers %+v", strict, got)
		}
		if r := tc.Routers["db"]; strict != (r == nil) || (r != nil && r.Service != "good") {
			t.Errorf("strict %v: router db %+v", strict, r)
		}
		if u := cfg.UDP; u.Services["app"] == nil || u.Routers["dns"].Service != "app" {
			t.Errorf("strict %v: udp default service and link: %+v %+v", strict, u.Services, u.Routers["dns"])
		}
	}
}
