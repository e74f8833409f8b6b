//go:build linux

package dataplane

import (
	"fmt"
	"net"
	"runtime"
	"syscall"

	"github.com/gantry-proxy/gantry/dataplane/internal/rawtcp"
	"golang.org/x/sys/unix"
)

// listenerCount is the number of listeners per entrypoint: one per
// GOMAXPROCS, each with its own accept loop; the kernel spreads incoming
// connections over them (SO_REUSEPORT).
func listenerCount() int { return max(1, runtime.GOMAXPROCS(0)) }

// listenConfig sets SO_REUSEPORT on every listening socket so several
// listeners can share one address, and the accepted connections'
// keep-alive (acceptKeepAlive) on the listening socket itself: Linux copies
// SO_KEEPALIVE, TCP_KEEPIDLE and TCP_KEEPINTVL from the listener to every
// socket accept returns (the accepted sock is a clone of the listener's,
// net/ipv4 inet_csk_clone_lock), so no accept pays the three setsockopt
// calls Go's listener makes per connection (KeepAlive -1 turns them off).
// Probes start after 15s idle, 15s apart, as Go's default listener sets
// them, the probe count left at the system's default (Linux
// net.ipv4.tcp_keepalive_probes, 9, Go's default too). The error of every
// setsockopt is returned, not ignored (like Traefik's controlReusePort).
func listenConfig() *net.ListenConfig {
	return &net.ListenConfig{KeepAlive: -1, Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
			if serr == nil {
				serr = setListenerKeepAlive(int(fd))
			}
		}); err != nil {
			return fmt.Errorf("control socket: %w", err)
		}
		if serr != nil {
			return fmt.Errorf("set listener options: %w", serr)
		}
		return nil
	}}
}

// inheritKeepAlive sets acceptKeepAlive on a listener the process did not
// open itself (a binary upgrade's inherited socket, whose parent may be
// an older version that set keep-alive per accepted connection).
func inheritKeepAlive(l net.Listener) error {
	sc, ok := l.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return fmt.Errorf("listener keep-alive: %w", err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = setListenerKeepAlive(int(fd)) }); err != nil {
		return fmt.Errorf("listener keep-alive: %w", err)
	}
	if serr != nil {
		return fmt.Errorf("listener keep-alive: %w", serr)
	}
	return nil
}

// setListenerKeepAlive sets acceptKeepAlive's options on listening socket
// fd, for the sockets it accepts to inherit (as a dialled socket's:
// rawtcp.SetKeepAlive).
func setListenerKeepAlive(fd int) error { return rawtcp.SetKeepAlive(fd, acceptKeepAlive) }
