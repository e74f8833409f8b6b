package main

import (
	"bytes"
	"io"
	"net"
	"time"
)

// serveShort answers the tcpconn route: on each connection it reads until
// the first '\n' (at most 4 KiB, within 10 s), writes a reply of size bytes
// ('r'… ending in '\n') and closes — the server closes first, as an
// HTTP/1.0 server or a short request/response protocol does.
func serveShort(l net.Listener, size int) {
	reply := append(bytes.Repeat([]byte("r"), max(size, 2)-1), '\n')
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			buf := make([]byte, 4096)
			got := 0
			for got < len(buf) {
				k, err := c.Read(buf[got:])
				if bytes.IndexByte(buf[got:got+k], '\n') >= 0 {
					_, _ = c.Write(reply)
					return
				}
				got += k
				if err != nil {
					return
				}
			}
		}()
	}
}

// echoUDP sends every datagram back to its sender, unchanged.
func echoUDP(u net.PacketConn) {
	buf := make([]byte, 65536)
	for {
		k, from, err := u.ReadFrom(buf)
		if err != nil {
			return
		}
		_, _ = u.WriteTo(buf[:k], from)
	}
}

// echoTCP echoes every connection's bytes back (io.Copy from a TCP
// connection to itself splices through a pipe on Linux) and half-closes
// after the client's EOF: the tcpbulk route's origin.
func echoTCP(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			_, _ = io.Copy(c, c)
			_ = c.(*net.TCPConn).CloseWrite()
		}()
	}
}
