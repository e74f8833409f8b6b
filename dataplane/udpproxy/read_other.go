//go:build !unix

package udpproxy

import (
	"net"
	"syscall"
)

// readDatagram reads one datagram from up into a pooled buffer and passes
// it to send. Outside Unix the buffer is held while waiting.
func readDatagram(up *net.UDPConn, _ syscall.RawConn, send func([]byte)) error {
	bp := datagramPool.Get().(*[]byte)
	defer datagramPool.Put(bp)
	n, err := up.Read(*bp)
	if err != nil {
		return err
	}
	send((*bp)[:n])
	return nil
}
