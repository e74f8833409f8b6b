package tcpudp

import (
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// Case 048 and issue 26, through the binary: the deprecated load-balancer
// proxyProtocol applies only to a service without a serversTransport; beside
// one, the transport decides (Traefik v3.7) — its PROXY v1 is sent, not the
// deprecated v2, and a transport without proxyProtocol sends none.
func TestCase048DeprecatedProxyProtocolBesideServersTransport(t *testing.T) {
	backend := proxyBackend(t)
	both, legacy, plain := harness.FreeAddr(t), harness.FreeAddr(t), harness.FreeAddr(t)
	g, _ := gantry(t, fmt.Sprintf("  both: {address: %q}\n  legacy: {address: %q}\n  plain: {address: %q}", both, legacy, plain), fmt.Sprintf(`
tcp:
  routers:
    both:   {entryPoints: [both], rule: "HostSNI(`+"`*`"+`)", service: both}
    legacy: {entryPoints: [legacy], rule: "HostSNI(`+"`*`"+`)", service: legacy}
    plain:  {entryPoints: [plain], rule: "HostSNI(`+"`*`"+`)", service: plain}
  services:
    both:   {loadBalancer: {serversTransport: v1, proxyProtocol: {version: 2}, servers: [{address: %q}]}}
    legacy: {loadBalancer: {proxyProtocol: {version: 1}, servers: [{address: %q}]}}
    plain:  {loadBalancer: {serversTransport: none, proxyProtocol: {version: 2}, servers: [{address: %q}]}}
  serversTransports:
    v1:   {proxyProtocol: {version: 1}}
    none: {dialTimeout: 5s}
`, backend, backend, backend))
	g.WaitOutput(t, 30*time.Second, "config applied")
	exchange := func(addr string) (string, error) {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			return "", err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c, "hello\nmore"); err != nil {
			return "", err
		}
		b, err := io.ReadAll(c)
		return string(b), err
	}
	for _, tc := range []struct{ name, addr, prefix string }{
		{"serversTransport v1 beside a deprecated v2", both, "PROXY TCP4 127.0.0.1 127.0.0.1 "},
		{"deprecated v1 alone", legacy, "PROXY TCP4 127.0.0.1 127.0.0.1 "},
		{"serversTransport without proxyProtocol beside a deprecated v2", plain, "hello|"},
	} {
		harness.Try(t, 30*time.Second, func() error {
			got, err := exchange(tc.addr)
			if err != nil {
				return err
			}
			if !strings.HasPrefix(got, tc.prefix) {
				return fmt.Errorf("%s: the backend saw %q, want it to start with %q", tc.name, got, tc.prefix)
			}
			return nil
		})
	}
}
