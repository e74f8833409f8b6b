package h1

import (
	"bufio"
	"bytes"
	"net/http"
	"runtime"
	"strconv"
	"time"

	"github.com/gantry-proxy/gantry/internal/replayconn"
)

// serve is the keep-alive loop; it reports how it ended.
func (cs *conn) serve() int {
	for {
		// A request that has arrived is always served (with Connection:
		// close while draining); shutdown cuts idle waits by deadline.
		end, herr, ok := cs.readHead()
		if cs.handoff {
			return endHandoff
		}
		if !ok {
			return endClose
		}
		if cs.reuse == nil {
			cs.reuse = new(reuse)
			cs.reuse.w.cs = cs
		}
		h := head{header: cs.reuse.header, mem: &cs.reuse.mem}
		if herr == nil {
			herr = parseHead(cs.buf[cs.r:end], &h, cs.srv.maxHeaders())
			cs.reuse.header = h.header
		}
		if herr == errH2Preface && !cs.served && cs.srv.H2C != nil {
			cs.handOver()
			return endHanded
		}
		cs.served = true
		if herr != nil {
			cs.reject(herr)
			return endClose
		}
		cs.r = end
		keep := cs.serveOne(&h)
		if cs.hijacked {
			return endHanded
		}
		if !keep {
			return endClose
		}
	}
}

// handOver gives the connection, with the unread bytes, to H2C.
func (cs *conn) handOver() {
	pending := bytes.Clone(cs.buf[cs.r:cs.w])
	cs.handoffDeadline = time.Time{}
	_ = cs.c.SetDeadline(time.Time{})
	cs.srv.state(cs.c, http.StateHijacked)
	cs.srv.H2C(&replayconn.Conn{Conn: cs.c, Pending: pending})
}

// reject answers a refused request head and closes the connection after
// a lingering half-close, so the answer is not lost to a reset caused by
// unread request bytes.
func (cs *conn) reject(e *headError) {
	if cs.srv.WriteTimeout > 0 {
		_ = cs.c.SetWriteDeadline(time.Now().Add(cs.srv.WriteTimeout))
	} else {
		_ = cs.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	}
	text := http.StatusText(e.status)
	msg := text + ": " + e.reason + "\n"
	b := make([]byte, 0, 160+len(msg))
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(e.status), 10)
	b = append(b, ' ')
	b = append(b, text...)
	b = append(b, "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(msg)), 10)
	b = append(b, "\r\n\r\n"...)
	b = append(b, msg...)
	if _, err := cs.c.Write(b); err == nil {
		cs.lingerClose()
	}
}

// Bounds of lingerClose: how long it waits for the client to close, and
// how many bytes it reads meanwhile.
const (
	lingerTimeout  = 500 * time.Millisecond // net/http's rstAvoidanceDelay
	lingerMaxBytes = 8 << 20
)

// lingerClose half-closes the connection (the last response is followed
// by a FIN) and reads and discards what the client still sends — the rest
// of an upload answered early, say with 413 — until it closes its side or
// lingerTimeout passes; then the caller closes. Closing with unread bytes
// would reset the connection, and a reset makes the client's kernel drop
// the response it has not read yet (a client still writing its upload
// sees "broken pipe" or "connection reset" instead of the answer). After
// lingerMaxBytes it stops reading (bounding the work) but still waits out
// lingerTimeout, as net/http's closeWriteAndWait does: the client, blocked
// on full socket buffers, has that long to read the answer.
func (cs *conn) lingerClose() {
	if cw, ok := cs.c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	until := time.Now().Add(lingerTimeout)
	cs.setReadDeadline(until)
	bp := bufPool.Get().(*[]byte)
	total := 0
	for total < lingerMaxBytes {
		n, err := cs.c.Read(*bp)
		total += n
		if err != nil {
			break
		}
	}
	bufPool.Put(bp)
	if total >= lingerMaxBytes {
		time.Sleep(time.Until(until))
	}
}

// serveOne runs the handler for one request; false means close.
func (cs *conn) serveOne(h *head) (keep bool) {
	u := cs.reuse
	if u.ctx == nil {
		u.ctx = newReqContext(cs.ctx)
		u.base = (&http.Request{}).WithContext(u.ctx)
	}
	cs.reqCtx = u.ctx
	defer func() {
		if !u.ctx.end() { // waited on: cancelled as the handler returned
			u.ctx, u.base = nil, nil
		}
		cs.reqCtx = nil
		u.trim()
	}()
	// The connection's Request, reset from base (which carries the
	// context and no other state), then filled.
	r := &u.req
	*r = *u.base
	r.Method, r.URL, r.RequestURI, r.Host = h.method, h.url, h.target, h.host
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, 1
	r.Header, r.Body, r.ContentLength, r.Close = h.header, http.NoBody, h.contentLength, h.close
	r.Trailer, r.RemoteAddr, r.TLS = h.trailer, cs.remote, cs.tlsState
	if h.minor == 0 {
		r.Proto, r.ProtoMinor = "HTTP/1.0", 0
	}
	var b *body
	if h.contentLength > 0 {
		cs.bodies = true
	}
	if h.contentLength != 0 {
		b = &body{cs: cs, req: r, chunked: h.chunked, remain: h.contentLength, expect: h.expectContinue}
		r.Body = b
		if h.chunked {
			r.TransferEncoding = []string{"chunked"}
		}
	}
	if cs.srv.WriteTimeout > 0 {
		_ = cs.c.SetWriteDeadline(time.Now().Add(cs.srv.WriteTimeout))
	}
	cs.rdMu.Lock()
	cs.userReadDeadline, cs.watchCut = false, false
	if b == nil {
		cs.startWatch()
	}
	cs.rdMu.Unlock()
	if b != nil {
		cs.armRead()
	} // else the idle wait's or the head's deadline stays until a watch clears it

	cs.continueSent = false
	cs.finalStarted.Store(false)
	bw := writerPool.Get().(*bufio.Writer)
	bw.Reset(connWriter{cs})
	w := &u.w
	if u.resp == nil {
		u.resp = make(http.Header, 8)
	} else {
		clear(u.resp)
	}
	w.reset(bw, r, h, b, u.resp)
	defer func() {
		bw.Reset(nil)
		writerPool.Put(bw)
		w.release()
	}()
	ok := cs.callHandler(w, r)
	cs.endWatch()
	if cs.hijacked {
		return false
	}
	if !ok || cs.peerGone {
		// An aborted or panicking handler: what it wrote stays incomplete
		// on the wire (no final chunk); the connection closes.
		if b != nil {
			b.finish()
		}
		return false
	}
	if cs.halfClosed || cs.srv.Draining != nil && cs.srv.Draining() {
		w.closeAfter = true
	}
	if err := w.finish(); err != nil {
		return false
	}
	unread := false
	if b != nil {
		cs.skipCRLF = true
		if !b.finish() {
			w.closeAfter, unread = true, true
		}
	}
	if w.closeAfter {
		if unread || cs.r < cs.w {
			cs.lingerClose()
		}
		return false
	}
	return true
}

// callHandler calls the handler, recovering a panic: http.ErrAbortHandler closes
// the connection silently, others are logged with a stack, as net/http does.
func (cs *conn) callHandler(w *response, r *http.Request) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			ok = false
			if v != http.ErrAbortHandler && cs.srv.Log != nil {
				buf := make([]byte, 64<<10)
				buf = buf[:runtime.Stack(buf, false)]
				cs.srv.Log.Error("panic serving request", "remote", cs.remote, "panic", v, "stack", string(buf))
			}
		}
	}()
	cs.srv.Handler.ServeHTTP(w, r)
	return true
}
