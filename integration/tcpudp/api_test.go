package tcpudp

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// /api/tcp/* and /api/udp/* list the objects in Traefik's shapes with
// status and errors: a router with a bad rule is disabled and says why; a
// second UDP router on one entrypoint is refused visibly (Traefik keeps one
// silently, case 046).
func TestAPIListsTCPAndUDP(t *testing.T) {
	api, tcpEP, udpEP := harness.FreeAddr(t), harness.FreeAddr(t), freeUDP(t)
	eps := fmt.Sprintf("  traefik:\n    address: %q\n  db:\n    address: %q\n  dns:\n    address: %q", api, tcpEP, udpEP+"/udp")
	g, _ := gantry(t, eps, `tcp:
  routers:
    good:
      entryPoints: [db]
      rule: HostSNI(`+"`*`"+`)
      service: db
      middlewares: [lan]
    bad:
      entryPoints: [db]
      rule: HostSNI(`+"`a`, `b`"+`)
      service: db
  services:
    db:
      loadBalancer:
        servers:
          - address: 127.0.0.1:5432
  middlewares:
    lan:
      ipAllowList:
        sourceRange: [127.0.0.1/32]
udp:
  routers:
    dns-a:
      entryPoints: [dns]
      service: dns
    dns-b:
      entryPoints: [dns]
      service: dns
  services:
    dns:
      loadBalancer:
        servers:
          - address: 127.0.0.1:53
`, "api:\n  insecure: true")
	_ = g
	get := func(path string, v any) {
		t.Helper()
		harness.Try(t, poll, func() error {
			r, err := http.Get("http://" + api + path)
			if err != nil {
				return err
			}
			defer r.Body.Close()
			b, _ := io.ReadAll(r.Body)
			if r.StatusCode != 200 {
				return fmt.Errorf("%s: %d %s", path, r.StatusCode, b)
			}
			return json.Unmarshal(b, v)
		})
	}
	// The API answers from the first generation on, before the file's
	// snapshot is applied: wait for the generation that holds all of it
	// (both TCP and both UDP routers, the service and the middleware)
	// before reading anything, or a read between two generations sees an
	// empty list (flaky on a busy machine).
	harness.Try(t, poll, func() error {
		var ov struct {
			TCP struct{ Routers, Services, Middlewares struct{ Total int } }
			UDP struct{ Routers, Services struct{ Total int } }
		}
		r, err := http.Get("http://" + api + "/api/overview")
		if err != nil {
			return err
		}
		defer r.Body.Close()
		if err := json.NewDecoder(r.Body).Decode(&ov); err != nil {
			return err
		}
		if ov.TCP.Routers.Total != 2 || ov.UDP.Routers.Total != 2 || ov.TCP.Services.Total != 1 ||
			ov.TCP.Middlewares.Total != 1 || ov.UDP.Services.Total != 1 {
			return fmt.Errorf("dynamic.yml not applied yet: overview %+v", ov)
		}
		return nil
	})
	type item struct {
		Name, Status, Provider, Rule, Service, Type string
		Error                                       []string
		Using, UsedBy                               []string
	}
	var routers []item
	get("/api/tcp/routers", &routers)
	byName := map[string]item{}
	for _, r := range routers {
		byName[r.Name] = r
	}
	if r := byName["good@file"]; r.Status != "enabled" || r.Provider != "file" || strings.Join(r.Using, ",") != "db" {
		t.Errorf("good router: %+v", r)
	}
	if r := byName["bad@file"]; r.Status != "disabled" || len(r.Error) == 0 || !strings.Contains(r.Error[0], "expected 1 argument") {
		t.Errorf("bad router: %+v", r)
	}
	var svc item
	get("/api/tcp/services/db@file", &svc)
	if svc.Type != "loadbalancer" || strings.Join(svc.UsedBy, ",") != "bad@file,good@file" {
		t.Errorf("tcp service: %+v", svc)
	}
	var mws []item
	get("/api/tcp/middlewares", &mws)
	if len(mws) != 1 || mws[0].Type != "ipallowlist" || mws[0].Status != "enabled" {
		t.Errorf("tcp middlewares: %+v", mws)
	}
	var udp []item
	get("/api/udp/routers", &udp)
	if len(udp) != 2 || udp[0].Name != "dns-a@file" || udp[0].Status != "enabled" ||
		udp[1].Status != "disabled" || len(udp[1].Error) == 0 || !strings.Contains(udp[1].Error[0], "already served by UDP router dns-a@file") {
		t.Errorf("udp routers: %+v", udp)
	}
	var us []item
	get("/api/udp/services", &us)
	if len(us) != 1 || us[0].Name != "dns@file" {
		t.Errorf("udp services: %+v", us)
	}
	// The overview counts them: total, and the disabled ones as errors.
	type section struct{ Total, Warnings, Errors int }
	var ov struct {
		TCP struct{ Routers, Services, Middlewares section }
		UDP struct{ Routers, Services section }
	}
	get("/api/overview", &ov)
	if want := (section{Total: 2, Errors: 1}); ov.TCP.Routers != want || ov.UDP.Routers != want {
		t.Errorf("overview routers: tcp %+v udp %+v, want %+v", ov.TCP.Routers, ov.UDP.Routers, want)
	}
	if one := (section{Total: 1}); ov.TCP.Services != one || ov.TCP.Middlewares != one || ov.UDP.Services != one {
		t.Errorf("overview tcp services %+v middlewares %+v, udp services %+v, want %+v", ov.TCP.Services, ov.TCP.Middlewares, ov.UDP.Services, one)
	}
}
