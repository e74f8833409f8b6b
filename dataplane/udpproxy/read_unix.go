//go:build unix

package udpproxy

import (
	"errors"
	"net"
	"syscall"
)

// readDatagram waits for the connected socket up to be readable (its read
// deadline applies) without holding a buffer, then reads one datagram into
// a pooled buffer and passes it to send before returning the buffer. The
// error is up's: a timeout at the deadline, ECONNREFUSED after an ICMP
// port unreachable, net.ErrClosed.
func readDatagram(_ *net.UDPConn, rc syscall.RawConn, send func([]byte)) error {
	var rerr error
	err := rc.Read(func(fd uintptr) bool {
		bp := datagramPool.Get().(*[]byte)
		defer datagramPool.Put(bp)
		for {
			n, err := syscall.Read(int(fd), *bp)
			switch {
			case errors.Is(err, syscall.EINTR):
				continue
			case errors.Is(err, syscall.EAGAIN):
				return false // wait in the poller, the buffer back in the pool
			case err != nil:
				rerr = &net.OpError{Op: "read", Net: "udp", Err: err}
				return true
			}
			send((*bp)[:n])
			return true
		}
	})
	if err != nil {
		return err
	}
	return rerr
}
