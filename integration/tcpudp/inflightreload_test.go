package tcpudp

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// Case 062 and issue 26, through the binary: inFlightConn's count carries
// over reloads that keep the middleware. With one connection open under a
// cap of 1, an unrelated reload (a service added to the dynamic file) must
// not let a second connection in (Traefik restarts its counts at every
// change); the deprecated ipWhiteList still filters.
func TestCase062InFlightConnAcrossReload(t *testing.T) {
	backend := echoServer(t)
	capped, old := harness.FreeAddr(t), harness.FreeAddr(t)
	conf := func(extra string) string {
		return fmt.Sprintf(`tcp:
  routers:
    capped: {entryPoints: [capped], rule: "HostSNI(`+"`*`"+`)", service: echo, middlewares: [one]}
    old:    {entryPoints: [old], rule: "HostSNI(`+"`*`"+`)", service: echo, middlewares: [wl]}
  services:
    echo: {loadBalancer: {servers: [{address: %q}]}}
%s  middlewares:
    one: {inFlightConn: {amount: 1}}
    wl:  {ipWhiteList: {sourceRange: ["192.0.2.1/32"]}}
`, backend, extra)
	}
	g, dyn := gantry(t, fmt.Sprintf("  capped: {address: %q}\n  old: {address: %q}", capped, old), conf(""))
	closed := func(c net.Conn) error {
		_ = c.SetDeadline(time.Now().Add(3 * time.Second))
		_, _ = c.Write([]byte("x\n"))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			return fmt.Errorf("connection served")
		}
		return nil
	}
	var first net.Conn
	harness.Try(t, poll, func() error {
		var err error
		if first, err = net.Dial("tcp", capped); err != nil {
			return err
		}
		if err := roundTrip(first, "first\n"); err != nil {
			first.Close()
			return err
		}
		return nil
	})
	defer first.Close()
	before := g.Process.CountOutput("config applied")
	harness.WriteFile(t, dyn, "dynamic.yml", conf("    other: {loadBalancer: {servers: [{address: \"127.0.0.1:1\"}]}}\n"))
	waitApplied(t, g, before)
	second, err := net.Dial("tcp", capped)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if err := closed(second); err != nil {
		t.Errorf("inFlightConn 1 after a reload: a second connection got through (%v): the count restarted", err)
	}
	if err := roundTrip(first, "still\n"); err != nil {
		t.Errorf("the first connection broke across the reload: %v", err)
	}
	c, err := net.Dial("tcp", old)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := closed(c); err != nil {
		t.Errorf("ipWhiteList 192.0.2.1/32: 127.0.0.1 %v", err)
	}
	g.WaitOutput(t, 60*time.Second, "ipWhiteList is deprecated")
}
