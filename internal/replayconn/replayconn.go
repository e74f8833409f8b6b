// Package replayconn holds Conn, a net.Conn that returns bytes already read
// from the connection before it reads the connection again: what a
// connection handed from one reader to another carries over (the bytes an
// HTTP/1.1 server buffered past a hijacked or h2c head, the TLS ClientHello
// peeked to route a TCP connection). It imports nothing of Gantry's, so
// every layer may use it.
package replayconn

import (
	"errors"
	"net"
)

// Conn reads Pending first, then the connection it wraps; every other
// method is the wrapped connection's.
type Conn struct {
	net.Conn
	// Pending are the bytes still to replay; Read consumes them.
	Pending []byte
}

// ErrNoHalfClose is CloseWrite's error when the wrapped connection has no
// CloseWrite.
var ErrNoHalfClose = errors.New("replayconn: connection cannot half-close")

// NetConn returns the connection Conn wraps (like tls.Conn's), so a caller
// can find the socket underneath.
func (c *Conn) NetConn() net.Conn { return c.Conn }

// CloseWrite half-closes the wrapped connection when it can (a TCP or TLS
// connection), so that a tunnel over Conn can pass a half-close on; else it
// returns ErrNoHalfClose and closes nothing.
func (c *Conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return ErrNoHalfClose
}

// Read copies Pending into p while any is left (without reading the
// connection, so a short result does not wait for more bytes), then reads
// the connection.
func (c *Conn) Read(p []byte) (int, error) {
	if len(c.Pending) > 0 {
		n := copy(p, c.Pending)
		c.Pending = c.Pending[n:]
		if len(c.Pending) == 0 {
			c.Pending = nil // the replayed array can be collected
		}
		return n, nil
	}
	return c.Conn.Read(p)
}
