package tcpudp

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// ipAllowList closes connections from outside its ranges; inFlightConn
// closes a client's connection over its cap while the first one lives.
func TestTCPMiddlewares(t *testing.T) {
	backend := echoServer(t)
	deny, capped := harness.FreeAddr(t), harness.FreeAddr(t)
	_, _ = gantry(t, fmt.Sprintf("  deny:\n    address: %q\n  capped:\n    address: %q", deny, capped), fmt.Sprintf(`tcp:
  routers:
    deny:
      entryPoints: [deny]
      rule: HostSNI(`+"`*`"+`)
      service: echo
      middlewares: [lan]
    capped:
      entryPoints: [capped]
      rule: HostSNI(`+"`*`"+`)
      service: echo
      middlewares: [one]
  services:
    echo:
      loadBalancer:
        servers:
          - address: %q
  middlewares:
    lan:
      ipAllowList:
        sourceRange: [10.0.0.0/8]
    one:
      inFlightConn:
        amount: 1
`, backend))
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
	second, err := net.Dial("tcp", capped)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if err := closed(second); err != nil {
		t.Errorf("inFlightConn 1: second connection: %v", err)
	}
	if err := roundTrip(first, "still\n"); err != nil {
		t.Errorf("inFlightConn: first connection broken: %v", err)
	}
	c, err := net.Dial("tcp", deny)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := closed(c); err != nil {
		t.Errorf("ipAllowList 10.0.0.0/8: 127.0.0.1 %v", err)
	}
}
