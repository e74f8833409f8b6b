//go:build !linux

package tcpproxy

import (
	"context"
	"net"
	"time"
)

// dialSocket connects to address with dialNet (raw sockets are Linux's).
func dialSocket(ctx context.Context, address string, timeout time.Duration, ka net.KeepAliveConfig) (socket, error) {
	return dialNet(ctx, address, timeout, ka)
}

// spliceCopy does nothing outside Linux: io.Copy (which splices between
// two *net.TCPConn where Go can) does the copy.
func spliceCopy(net.Conn, net.Conn, func(int64)) (bool, error) { return false, nil }
