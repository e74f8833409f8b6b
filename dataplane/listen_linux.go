//go:build linux

package dataplane

import (
	"fmt"
	"net"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// listenerCount is the number of listeners per entrypoint: one per
// GOMAXPROCS, each with its own accept loop; the kernel spreads incoming
// connections over them (SO_REUSEPORT).
func listenerCount() int { return max(1, runtime.GOMAXPROCS(0)) }

// listenConfig sets SO_REUSEPORT on every listening socket so several
// listeners can share one address. The error of setsockopt is returned,
// not ignored (like Traefik's controlReusePort). Accepted connections get
// keep-alive probes as Go's default listener gives
// them, 15s idle and 15s apart, with the probe count left at the system's
// default (Linux net.ipv4.tcp_keepalive_probes, 9, Go's default too):
// three setsockopt calls per connection instead of four.
func listenConfig() *net.ListenConfig {
	return &net.ListenConfig{KeepAliveConfig: acceptKeepAlive, Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		}); err != nil {
			return fmt.Errorf("control socket: %w", err)
		}
		if serr != nil {
			return fmt.Errorf("set SO_REUSEPORT: %w", serr)
		}
		return nil
	}}
}
