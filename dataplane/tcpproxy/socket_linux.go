//go:build linux

package tcpproxy

import (
	"context"
	"net"
	"net/netip"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/internal/rawtcp"
)

// dialSocket connects to address within timeout (none when 0) and ctx:
// on a raw socket (rawtcp.Dial: three system calls fewer than net.Dialer,
// and no deadline context or resolver pass) when address is an IP address
// and port, else with dialNet. ka, when enabled, is set before the
// connect. Errors are net.Dialer's *net.OpError ("dial tcp <addr>: ...").
func dialSocket(ctx context.Context, address string, timeout time.Duration, ka net.KeepAliveConfig) (socket, error) {
	if ap, err := netip.ParseAddrPort(address); err == nil && ap.Addr().Zone() == "" {
		c, err := rawtcp.Dial(ctx, ap, timeout, ka)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	return dialNet(ctx, address, timeout, ka)
}

// spliceCopy copies src to dst with splice(2) when both are TCP sockets
// (rawtcp.Copy; ok false otherwise), reporting the bytes to counted.
func spliceCopy(dst, src net.Conn, counted func(int64)) (ok bool, err error) {
	return rawtcp.Copy(dst, src, counted)
}
