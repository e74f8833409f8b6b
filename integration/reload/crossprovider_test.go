package reload

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/providertest"
)

// Case 011: a file router using a middleware of another provider
// ("sso@docker") is left out (404) until that provider delivers, then
// served without restart; a docker router using "headers-std@file" and
// its own unqualified chain works; a service of the other provider that
// disappears disables the router using it, and recovers.
func TestServedCrossProviderReferences(t *testing.T) {
	dir := t.TempDir()
	docker := providertest.New("docker")
	s := newStackWith(t, static.File{Directory: dir}, []providers.Provider{docker}, "nas", "app")
	if err := os.WriteFile(filepath.Join(dir, "mw.yml"), fmt.Appendf(nil, `http:
  middlewares:
    headers-std:
      headers:
        customResponseHeaders: {X-Std: "1"}
  routers:
    nas:
      rule: Host(%s)
      service: nas
      middlewares: ["sso@docker"]
  services:
    nas:
      loadBalancer:
        servers: [{url: %q}]
`, "`nas.test`", s.url("nas")), 0o644); err != nil {
		t.Fatal(err)
	}
	// Before docker delivers: sso@docker does not exist, nas is not routed.
	s.expect(t, "file router waiting for docker's middleware", "nas.test", "404")

	dockerConf := func(withService bool) providers.Snapshot {
		c := config.New()
		c.HTTP.Middlewares["sso"] = &config.Middleware{Headers: &config.Headers{CustomResponseHeaders: map[string]string{"X-SSO": "checked"}}}
		c.HTTP.Middlewares["local-chain"] = &config.Middleware{Chain: &config.Chain{Middlewares: []string{"tag"}}}
		c.HTTP.Middlewares["tag"] = &config.Middleware{Headers: &config.Headers{CustomResponseHeaders: map[string]string{"X-Chain": "docker"}}}
		c.HTTP.Routers["app"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Host(`app.test`)", Service: "app", Middlewares: []string{"headers-std@file", "local-chain"}}}
		c.HTTP.Routers["shared"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Host(`shared.test`)", Service: "nas@file"}}
		if withService {
			c.HTTP.Services["app"] = &config.Service{LoadBalancer: &config.ServersLoadBalancer{Servers: []config.Server{{URL: s.url("app")}}}}
		}
		return providers.Snapshot{Config: c}
	}
	docker.Publish(dockerConf(true))
	s.expect(t, "file router rebuilt once docker delivered", "nas.test", "nas")
	s.expect(t, "docker router using a file service", "shared.test", "nas")
	s.expect(t, "docker router using file and docker middlewares", "app.test", "app")
	_, _, h, err := s.getH("app.test")
	if err != nil || h.Get("X-Std") != "1" || h.Get("X-Chain") != "docker" {
		t.Errorf("app.test headers %v (%v): want X-Std from headers-std@file and X-Chain from local-chain@docker", h, err)
	}
	if _, _, h, _ := s.getH("nas.test"); h.Get("X-SSO") != "checked" {
		t.Errorf("nas.test headers %v: want X-SSO from sso@docker", h)
	}

	// The docker service disappears: its router is disabled; it comes back.
	docker.Publish(dockerConf(false))
	s.expect(t, "router of a vanished service", "app.test", "404")
	docker.Publish(dockerConf(true))
	s.expect(t, "service back", "app.test", "app")
}
