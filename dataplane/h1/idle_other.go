//go:build !unix

package h1

// readIdle reads the next request's first bytes into a small buffer (no
// buffer-free wait on this platform).
func (cs *conn) readIdle() (int, error) { return cs.readIdleBuffered() }
