package upstream

import (
	"bufio"
	"context"
	"errors"
	"net"
	"syscall"
	"time"
)

// readBufSize is each connection's read buffer: a response head that fits
// is parsed in place; a longer one grows it up to MaxResponseHeaderBytes.
const readBufSize = 4 << 10

// probeAfter is how long a read waits before the request's context is
// watched for cancellation (the client going away). Fast answers never
// register a watch (context.AfterFunc allocates); slow ones get it.
const probeAfter = 100 * time.Millisecond

var aLongTimeAgo = time.Unix(1, 0)

// pconn is one HTTP/1.1 connection to a backend. It is owned by exactly one
// exchange at a time (from Host.get or dial until Host.put or close).
type pconn struct {
	c      net.Conn
	buf    []byte // unread bytes are buf[r:w]
	r, w   int
	bw     *bufio.Writer
	idleAt time.Time
	reused bool

	// Per exchange: the request's context, the hard read deadline of the
	// current phase (zero: none), whether the deadline set on the socket is
	// the short probe, and the AfterFunc registration once watching.
	ctx     context.Context
	hard    time.Time
	probing bool
	// rdl is the read deadline phase last set on the socket, rdlProbe
	// whether it was a probe one.
	rdl      time.Time
	rdlProbe bool
	stop     func() bool
	cut      func() // sets a past deadline; allocated once per connection
	// idle: the hard deadline is an idle one (the body phase), re-armed
	// from lastRead (unix ns of the last read that returned bytes) when
	// it expires after progress.
	idle     time.Duration
	lastRead int64

	// Liveness peek before reuse (alive): the socket's RawConn and the
	// callback, made once.
	raw    syscall.RawConn
	peekFn func(uintptr)
	peekOK bool

	// Body reads on a plain TCP connection (readFn non-nil) go through
	// raw, so that a read that would wait first lets blk flush the client
	// (bodyReader.read); rp, rn, rerr carry one read's buffer and result.
	readFn func(uintptr) bool
	blk    *bodyReader
	rp     []byte
	rn     int
	rerr   error

	br      bodyReader // the current response body (reused)
	wantBig bool       // the last body needed reads beyond its head's: read the next head into br's big buffer

	// firstAt is when the first response byte after stampFirst arrived
	// (unix ns; 0 while none or not stamping).
	stamp   bool
	firstAt int64

	fields   []field // the current head's fields (reused)
	cache    []cachedField
	conn     []string
	trailers []field

	// bw writes through cw, which can send a body after what bw flushes
	// in one writev.
	cw connWriter
}

// connWriter is the writer under a pconn's bufio.Writer: a write goes to
// the socket; with tail set (sendWith), tail follows it in the same
// writev on a TCP connection.
type connWriter struct {
	pc     *pconn
	writev bool
	tail   []byte
	iov    [2][]byte
	bufs   net.Buffers
}

func (w *connWriter) Write(p []byte) (int, error) {
	if w.tail == nil {
		return w.pc.c.Write(p)
	}
	tail := w.tail
	w.tail = nil
	if !w.writev {
		n, err := w.pc.c.Write(p)
		if err != nil {
			return n, err
		}
		_, err = w.pc.c.Write(tail)
		return n, err
	}
	w.iov = [2][]byte{p, tail}
	w.bufs = w.iov[:]
	n, err := w.bufs.WriteTo(w.pc.c)
	w.iov, w.bufs = [2][]byte{}, nil
	return int(min(n, int64(len(p)))), err
}

// sendWith flushes what bw holds and p after it: one writev on a TCP
// connection (a request head and a small body in one segment).
func (pc *pconn) sendWith(p []byte) error {
	if pc.bw.Buffered() == 0 || len(p) <= pc.bw.Available() {
		pc.bw.Write(p)
		return pc.bw.Flush()
	}
	pc.cw.tail = p
	err := pc.bw.Flush()
	pc.cw.tail = nil
	return err
}

func newPconn(c net.Conn) *pconn {
	pc := &pconn{c: c, buf: make([]byte, readBufSize)}
	pc.cw.pc = pc
	pc.bw = bufio.NewWriterSize(&pc.cw, 4<<10)
	if _, ok := c.(*net.TCPConn); ok {
		pc.cw.writev = true
	}
	pc.cut = func() { _ = pc.c.SetDeadline(aLongTimeAgo) }
	pc.setRaw(c)
	if pc.raw != nil && rawReads {
		pc.readFn = pc.rawRead
	}
	return pc
}

// setRaw sets the socket the liveness peek reads (c's, when it has one).
func (pc *pconn) setRaw(c net.Conn) {
	if sc, ok := c.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			pc.raw = rc
			pc.peekFn = pc.peek
		}
	}
}

// begin starts an exchange on pc under ctx.
func (pc *pconn) begin(ctx context.Context) {
	pc.ctx = ctx
	pc.stop = nil
	pc.stamp, pc.firstAt = false, 0
	pc.probing = false
	pc.hard = time.Time{}
	pc.idle = 0
}

// idlePhase starts a phase whose reads may each wait at most d (0: no
// limit); now is the current time. See phase.
func (pc *pconn) idlePhase(d time.Duration, now time.Time) error {
	if d <= 0 {
		pc.idle = 0
		return pc.phase(time.Time{}, now)
	}
	pc.idle, pc.lastRead = d, now.UnixNano()
	return pc.phase(now.Add(d), now)
}

// phase sets the hard read deadline of the next reads (zero: none) and arms
// the probe, so a read that waits longer than probeAfter starts watching
// the context; now is the current time (the caller's clock reading, so a
// request costs fewer). It reports the context's error when the exchange
// was cancelled meanwhile (a deadline set here may have replaced the past
// one set by the cancellation). A probe deadline already on the socket
// that is still at least half a probe away is kept: under load the socket's
// deadline (a runtime timer) changes once per 50 ms, not per request, and
// a slow read merely starts its watch a little early.
func (pc *pconn) phase(hard, now time.Time) error {
	pc.hard = hard
	if pc.stop != nil {
		pc.setReadDeadline(hard, false)
		return pc.ctx.Err()
	}
	p := now.Add(probeAfter)
	if !hard.IsZero() && hard.Before(p) {
		pc.probing = false
		pc.setReadDeadline(hard, false)
		return nil
	}
	pc.probing = true
	if pc.rdlProbe && pc.rdl.Sub(now) >= probeAfter/2 {
		return nil
	}
	pc.setReadDeadline(p, true)
	return nil
}

// setReadDeadline sets the socket's read deadline and remembers it (probe:
// it is a probe deadline, which phase may keep).
func (pc *pconn) setReadDeadline(t time.Time, probe bool) {
	_ = pc.c.SetReadDeadline(t)
	pc.rdl, pc.rdlProbe = t, probe
}

// watch registers the cancellation of pc.ctx (idempotent).
func (pc *pconn) watch() {
	if pc.stop == nil {
		pc.stop = context.AfterFunc(pc.ctx, pc.cut)
	}
}

// end finishes the exchange's use of the context. It reports false when
// the context was cancelled (the connection's deadlines are then spoiled).
// A read deadline left on the socket does not matter: every exchange sets
// its own (phase) before reading, and the liveness peek ignores it.
func (pc *pconn) end() bool {
	pc.ctx = nil
	pc.probing = false
	if pc.stop != nil {
		ok := pc.stop()
		pc.stop = nil
		return ok
	}
	return true
}

// stampFirst makes the next read that returns bytes note its time in
// firstAt.
func (pc *pconn) stampFirst() {
	pc.stamp, pc.firstAt = true, 0
	if pc.r < pc.w {
		pc.stamp, pc.firstAt = false, time.Now().UnixNano()
	}
}

// read reads from the socket into p, turning an expired probe into a watch
// of the context and waiting on.
func (pc *pconn) read(p []byte) (int, error) {
	for {
		var n int
		var err error
		if pc.blk != nil {
			n, err = pc.readRaw(p)
		} else {
			n, err = pc.c.Read(p)
		}
		if n > 0 && (pc.stamp || pc.idle > 0) {
			t := time.Now().UnixNano()
			if pc.stamp {
				pc.stamp, pc.firstAt = false, t
			}
			pc.lastRead = t
		}
		if n == 0 && err != nil && isTimeout(err) {
			if pc.probing {
				pc.probing = false
				pc.setReadDeadline(pc.hard, false)
				pc.watch()
				if cerr := pc.ctx.Err(); cerr != nil {
					return 0, cerr
				}
				continue
			}
			if pc.idle > 0 && pc.ctx != nil && pc.ctx.Err() == nil {
				// The idle deadline passed: bytes read since it was set
				// move it to idle after the last of them.
				if next := time.Unix(0, pc.lastRead).Add(pc.idle); time.Until(next) > 0 {
					pc.hard = next
					pc.setReadDeadline(next, false)
					continue
				}
				return 0, &timeoutError{"response body bytes"}
			}
		}
		if err != nil && pc.ctx != nil {
			if cerr := pc.ctx.Err(); cerr != nil {
				return n, cerr
			}
		}
		return n, err
	}
}

// readRaw is one read through the RawConn: the first attempt that would
// wait calls pc.blk.blocked() before the goroutine parks; when that fails
// (the client went away), the read ends with no bytes.
func (pc *pconn) readRaw(p []byte) (int, error) {
	pc.rp, pc.rn, pc.rerr = p, 0, nil
	err := pc.raw.Read(pc.readFn)
	pc.rp = nil
	if err != nil {
		return 0, err
	}
	return pc.rn, pc.rerr
}

// fill reads more bytes into the buffer, compacting or growing it up to
// limit bytes of unread data. It returns errHeadTooLarge when the unread
// data already fills limit.
func (pc *pconn) fill(limit int) error {
	if pc.r > 0 && pc.w == len(pc.buf) {
		n := copy(pc.buf, pc.buf[pc.r:pc.w])
		pc.r, pc.w = 0, n
	}
	if pc.w == len(pc.buf) {
		if len(pc.buf) >= limit {
			return errHeadTooLarge
		}
		nb := make([]byte, min(2*len(pc.buf), limit))
		pc.w = copy(nb, pc.buf[pc.r:pc.w])
		pc.r = 0
		pc.buf = nb
	}
	n, err := pc.read(pc.buf[pc.w:])
	pc.w += n
	if n > 0 {
		return nil
	}
	if err == nil {
		return errors.New("upstream: empty read")
	}
	return err
}

func isTimeout(err error) bool {
	ne, ok := errors.AsType[net.Error](err)
	return ok && ne.Timeout()
}
