//go:build !linux

package upstream

// alive cannot peek without allocating or blocking portably here; a stale
// connection is caught by the retry of replayable requests instead.
func alive(*pconn) bool { return true }

func (pc *pconn) peek(uintptr) {}

// rawReads: body reads use net.Conn.Read (flushing before each).
const rawReads = false

func (pc *pconn) rawRead(uintptr) bool { return true }
