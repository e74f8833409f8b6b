package docker

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// dialInNetns connects to addr (a 127.0.0.1 address) from inside the network
// namespace of process pid: the loopback of a container, which stays
// reachable while dockerd and its port proxies are stopped. The socket is
// created on a thread moved into that namespace; the thread is not
// unlocked, so the runtime discards it when the goroutine ends and no other
// goroutine ever runs in the container's namespace.
func dialInNetns(ctx context.Context, pid int, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		fd, err := unix.Open(fmt.Sprintf("/proc/%d/ns/net", pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			ch <- result{nil, fmt.Errorf("open netns of pid %d: %w", pid, err)}
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			ch <- result{nil, fmt.Errorf("setns to pid %d: %w", pid, err)}
			return
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

// netnsClient is an HTTP client whose connections are made inside the
// network namespace of pid.
func netnsClient(pid int) *http.Client {
	return &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			DisableKeepAlives: true,
			DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
				return dialInNetns(ctx, pid, addr)
			},
		},
	}
}
