package consul

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// refused reports whether a TCP connection to addr is refused.
func refused(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		c.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// Dynamic entrypoints from Consul catalog tags through the real binary and
// a real agent (issue 18, traefik/traefik#6551): a service tagged
// gantry.entrypoints.shop.address inside dynamicEntryPoints.allowed gets a
// listener and its router answers through it; a service asking outside the
// allow-list is a problem naming its instance and tag, and its port is not
// bound; deregistered → the listener closes.
func TestDynamicEntryPointsFromTags(t *testing.T) {
	a := startAgent(t)
	w := harness.StartWhoami(t, "shop")
	web, api := harness.FreeAddr(t), harness.FreeAddr(t)
	shopPort, evilPort := harness.FreePort(t), harness.FreePort(t)
	shop, evil := "127.0.0.1:"+strconv.Itoa(shopPort), "127.0.0.1:"+strconv.Itoa(evilPort)
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  web: {address: %q}
  traefik: {address: %q}
api: {insecure: true}
dynamicEntryPoints:
  allowed: [%q]
  template: {transport: {lifeCycle: {graceTimeOut: 1s}}}
providers:
  providersThrottleDuration: 50ms
  consulCatalog:
    exposedByDefault: false
    endpoint: {address: %q, endpointWaitTime: 5s}
`, web, api, shop, a.Addr))
	registerWhoami(t, a, "shop-1", "shop", w,
		"traefik.enable=true",
		"gantry.entrypoints.shop.address="+shop,
		"traefik.http.routers.shop.rule=PathPrefix(`/`)",
		"traefik.http.routers.shop.entrypoints=shop")
	harness.TryGet(t, e2eTimeout, "http://"+shop+"/", harness.StatusIs(200), harness.BodyContains("Name: shop"))
	harness.TryGet(t, e2eTimeout, g.URL(t, "web", "/"), harness.StatusIs(404)) // on shop only
	harness.TryGet(t, e2eTimeout, g.URL(t, "traefik", "/api/entrypoints/shop"), harness.StatusIs(200),
		harness.BodyContains(`"address":"`+shop+`"`), harness.BodyContains(`"dynamic":true`))

	registerWhoami(t, a, "evil-1", "evil", w, "traefik.enable=true", "gantry.entrypoints.evil.address="+evil)
	harness.TryGet(t, e2eTimeout, g.URL(t, "traefik", "/api/problems"), harness.StatusIs(200),
		harness.BodyContains(`tag gantry.entrypoints.evil.address"`),
		harness.BodyContains(`entrypoint evil: address \"`+evil+`\" is outside dynamicEntryPoints.allowed (`+shop+`); not opened`))
	if !refused(evil) {
		t.Errorf("%s, outside the allow-list, is bound", evil)
	}

	a.deregister(t, "shop-1")
	harness.Try(t, e2eTimeout, func() error {
		if !refused(shop) {
			return fmt.Errorf("%s still accepts after its service was deregistered", shop)
		}
		return nil
	})
}
