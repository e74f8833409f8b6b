package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
)

// Result is the outcome of one Forward.
type Result struct {
	// Status is the final status the backend answered (0: none).
	Status int
	// Sent reports that the response head went to the client: an error can
	// then no longer be answered, only the response aborted.
	Sent bool
	// TTFB is the time from the start of Forward to the backend's first
	// response head (a 1xx counts), 0 when none came.
	TTFB time.Duration
	// Err is nil when the exchange completed cleanly. Classify it with
	// IsDialError (nothing was sent: another server may take the request),
	// *ClientError (the client's body failed), *ClientWriteError (the
	// client went away while the response was relayed), *ProtocolError
	// (a malformed response), a net.Error with Timeout() (the response
	// head did not come in time: 504), the request context's error (the
	// client gave up: 499); anything else is a transport failure (502).
	Err error
}

// ClientWriteError is a failure writing the response to the client.
type ClientWriteError struct{ Err error }

func (e *ClientWriteError) Error() string { return "upstream: writing to the client: " + e.Err.Error() }
func (e *ClientWriteError) Unwrap() error { return e.Err }

// timeoutError is the response-header timeout.
type timeoutError struct{ phase string }

func (e *timeoutError) Error() string   { return "upstream: timeout awaiting " + e.phase }
func (e *timeoutError) Timeout() bool   { return true }
func (e *timeoutError) Temporary() bool { return true }

var _ net.Error = (*timeoutError)(nil)

// copyBufs are the body copy buffers (32 KiB), shared by all Clients.
var copyBufs = sync.Pool{New: func() any { return new([32 << 10]byte) }}

// errStale marks a reused connection that failed before any response
// byte: the server closed it between the liveness check and the request's
// write. A replayable request is sent again on a new connection.
var errStale = errors.New("upstream: reused connection closed by the server")

// Forward sends ob to the backend and relays the response to w: 1xx
// responses (100 Continue when the client asked for it, 103 Early Hints,
// …) through w.WriteHeader(1xx), then the final head, the body and the
// trailers. The body is relayed as it arrives (w is flushed whenever the
// backend pauses); the request body is streamed while the response is
// read, so a backend that answers early (401, 413) gets its answer to
// the client and the upload stops. A WebSocket upgrade (101) hijacks the
// client's connection and splices both directions with half-close.
//
// Forward never panics and never writes an error page: on an error with
// Result.Sent false nothing reached the client and the caller answers;
// with Sent true the caller must abort the response
// (panic(http.ErrAbortHandler)) so the client never sees a broken message
// as complete. A connection is reused only after an exchange that ended
// cleanly (the whole request sent, the whole response read, no
// Connection: close). Forward is called from the request's goroutine; it
// starts a goroutine only to stream a request body of unknown or large
// size, and joins it before returning.
func (h *Host) Forward(w http.ResponseWriter, ob *Outbound) (res Result) {
	start := time.Now()
	h.uses.Add(1)
	r := ob.Req
	up := isUpgrade(r)
	if h.scheme == "h2c" {
		return h.forwardH2(w, ob, start, nil)
	}
	if cc := h.h2cc.Load(); cc != nil && !up {
		if cc.ReserveNewRequest() {
			return h.forwardH2(w, ob, start, cc)
		}
	}
	replay := !hasBody(r) && replayable(r)
	for attempt := 0; ; attempt++ {
		pc := h.get(start)
		if pc == nil {
			var cc *http2.ClientConn
			var err error
			pc, cc, err = h.dial(r.Context(), up)
			if err != nil {
				return Result{Err: err}
			}
			if cc != nil {
				h.h2cc.Store(cc)
				if cc.ReserveNewRequest() {
					return h.forwardH2(w, ob, start, cc)
				}
				return Result{Err: &dialError{errors.New("upstream: new HTTP/2 connection refuses requests")}}
			}
		}
		res = h.exchange(pc, w, ob, start, up)
		if errors.Is(res.Err, errStale) && attempt == 0 && replay && r.Context().Err() == nil {
			continue
		}
		return res
	}
}

// replayable reports whether a bodyless request may be sent again after it
// possibly reached the server (net/http's Request.isReplayable).
func replayable(r *http.Request) bool {
	switch r.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, ok := r.Header["Idempotency-Key"]
	if !ok {
		_, ok = r.Header["X-Idempotency-Key"]
	}
	return ok
}

// syncBodyMax is the largest request body (known length, no Expect) that
// is read whole from the request goroutine and sent with the head in one
// write before the response is read; a backend that answers early without
// reading it is still read after the write (the socket buffers hold it),
// so this never deadlocks.
const syncBodyMax = 16 << 10

// bodyWriter streams a request body from its own goroutine.
type bodyWriter struct {
	done   chan error   // the writer's result (cap 1)
	cont   chan bool    // Expect: true sends the body, false abandons it (cap 1)
	head   atomic.Bool  // the final response head was read
	doneAt atomic.Int64 // unix ns when the whole body was written; 0 until then
	wait   sync.WaitGroup

	joined bool  // finish ran
	err    error // the writer's result, once joined
}

func (h *Host) exchange(pc *pconn, w http.ResponseWriter, ob *Outbound, start time.Time, up bool) (res Result) {
	r := ob.Req
	ctx := r.Context()
	pc.begin(ctx)
	reuse := false
	defer func() {
		pc.br.release()
		ok := pc.end()
		if reuse && ok {
			h.put(pc)
		} else {
			pc.c.Close()
		}
	}()
	stale := func(err error) error {
		if pc.reused && res.TTFB == 0 && ctx.Err() == nil {
			return fmt.Errorf("%w: %w", errStale, err)
		}
		return err
	}
	keepAlive := h.c.o.MaxIdleConnsPerHost > 0
	if err := writeHead(pc.bw, ob, h.addr, !keepAlive, up); err != nil {
		pc.bw.Reset(&pc.cw)
		return Result{Err: err}
	}
	body := hasBody(r)
	expect := body && expects100(r)
	var bw *bodyWriter
	var werr error // a failed synchronous body write: the response may still be there
	bodyDone := !body
	switch {
	case body && !expect && r.ContentLength > 0 && r.ContentLength <= syncBodyMax:
		b := copyBufs.Get().(*[32 << 10]byte)
		werr = writeSmallBody(pc, r, b[:r.ContentLength])
		copyBufs.Put(b)
		if ce, ok := errors.AsType[*ClientError](werr); ok {
			return Result{Err: ce}
		}
		bodyDone = werr == nil
		if werr != nil {
			werr = stale(werr)
		}
	default:
		if err := pc.bw.Flush(); err != nil {
			return Result{Err: stale(err)}
		}
		if body {
			_ = http.NewResponseController(w).EnableFullDuplex()
			pc.watch() // the writer may block: cancellation must reach it
			bw = &bodyWriter{done: make(chan error, 1), cont: make(chan bool, 1)}
			pc.stampFirst() // an answer that starts before the body was sent is early
			if !expect {
				bw.cont <- true
			}
			bw.wait.Go(func() {
				ok := <-bw.cont
				if !ok {
					bw.done <- errAbandoned
					return
				}
				b := copyBufs.Get().(*[32 << 10]byte)
				err := writeBody(pc.bw, r, b[:])
				copyBufs.Put(b)
				if err == nil {
					bw.doneAt.Store(time.Now().UnixNano())
				}
				if _, ok := errors.AsType[*ClientError](err); ok && !bw.head.Load() {
					// The client's upload failed before the backend
					// answered: end the wait for a response that may
					// never come (the backend awaits the rest).
					pc.c.Close()
				}
				bw.done <- err
			})
			defer func() {
				if bw.finish(pc) != nil {
					bodyDone = false
				}
			}()
		}
	}
	// The response-header timeout runs from the end of the request head:
	// without a body that is microseconds after start (no clock reading
	// of its own), after a body now.
	now := start
	if body {
		now = time.Now()
	}
	var deadline time.Time
	if t := h.c.o.ResponseHeaderTimeout; t > 0 {
		deadline = now.Add(t)
	}
	var expectTimer *time.Timer
	if expect {
		expectTimer = time.AfterFunc(h.c.o.ExpectContinueTimeout, func() { bw.release(true) })
		defer expectTimer.Stop()
	}
	if bw == nil {
		// The request is out whole. Yield once before the first read:
		// under load the backend's answer usually arrives while other
		// goroutines run, and the read finds it instead of failing with
		// EAGAIN and parking the goroutine for a netpoll wake-up (get1k:
		// 0.64 -> 0.21 EAGAIN reads per request); with nothing else to
		// run, Gosched returns at once.
		runtime.Gosched()
	}
	if err := pc.phase(deadline, now); err != nil {
		return Result{Err: err}
	}
	if pc.wantBig {
		// The last response here needed reads beyond its head's: this
		// head is read into the 32 KiB body buffer, with what follows.
		pc.br = bodyReader{pc: pc}
		pc.br.grow()
	}
	var hd head
	limit := h.c.o.MaxResponseHeaderBytes
	informational := 0
	for {
		err := pc.readHead(&hd, r.Method, limit)
		if err != nil {
			if bw != nil {
				// The upload's own failure explains a cut connection (and
				// net/http cancels the request when its body read fails).
				if _, ok := errors.AsType[*ClientError](bw.finish(pc)); ok {
					return Result{Err: bw.err}
				}
			}
			return Result{Err: headError(pc, ctx, err, werr, stale)}
		}
		if res.TTFB == 0 {
			res.TTFB = time.Since(start)
		}
		if hd.status >= 200 || hd.status == http.StatusSwitchingProtocols {
			break
		}
		if informational++; informational > 16 {
			return Result{Err: protoErr("more than 16 informational responses")}
		}
		if hd.status == http.StatusContinue {
			if expect {
				expectTimer.Stop()
				// The client's own Expect is answered before its body is read.
				relay1xx(w, pc, hd.status)
				pc.stampFirst()
				bw.release(true)
			}
			continue
		}
		relay1xx(w, pc, hd.status)
	}
	res.Status = hd.status
	if bw != nil {
		bw.head.Store(true)
	}
	if hd.status == http.StatusSwitchingProtocols {
		if !up {
			return Result{Err: protoErr("101 Switching Protocols to a request that asked for no upgrade"), TTFB: res.TTFB}
		}
		return h.upgrade(pc, w, &hd, res)
	}
	if bw != nil {
		// Expect not answered by a 100: the body is not sent. An upload
		// still running is an early final response: it stops, its
		// connection is not reused, the response goes through.
		bw.release(false)
	}
	if up {
		// Upgrade refused: relay the answer, never reuse the connection.
		hd.close = true
	}
	// The response head goes to the client.
	hdr := w.Header()
	for _, f := range pc.fields {
		if hopByHop(f.name, pc.conn) {
			if f.name == "Trailer" && hd.framing == bodyChunked {
				hdr["Trailer"] = append(hdr["Trailer"], f.value)
			}
			continue
		}
		if old := hdr[f.name]; old != nil {
			hdr[f.name] = append(old, f.value)
		} else {
			hdr[f.name] = f.vals
		}
	}
	// The body phase's reads each wait at most BodyReadTimeout; a body
	// already in the buffer needs no more reads (nor the deadline changes).
	if hd.framing != bodyNone && !(hd.framing == bodyLength && hd.length <= int64(pc.w-pc.r)) {
		if err := pc.idlePhase(h.c.o.BodyReadTimeout, start.Add(res.TTFB)); err != nil {
			return Result{Err: err, Status: res.Status, TTFB: res.TTFB}
		}
	}
	w.WriteHeader(hd.status)
	res.Sent = true
	br := &pc.br
	// dirty: the head is written but not flushed. The first body read that
	// would wait flushes it, so a head whose body comes later (an event
	// stream, long polling, a stalled backend) reaches the client at once,
	// while a body already here leaves with its head in one write.
	*br = bodyReader{pc: pc, w: w, framing: hd.framing, limit: limit, big: br.big, small: br.small, dirty: true}
	if hd.framing == bodyLength {
		br.left = hd.length
	}
	err := br.relay()
	br.w = nil
	if err != nil {
		res.Err = err
		return res
	}
	if hd.framing == bodyChunked {
		for _, f := range pc.trailers {
			if !hopByHop(f.name, nil) && f.name != "Content-Length" {
				k := http.TrailerPrefix + f.name
				hdr[k] = append(hdr[k], f.value)
			}
		}
	}
	if bw != nil {
		// Reused only when the whole body was written before the answer
		// began: a backend that answered first may not have read it, and
		// may close (or reset) the connection (RFC 9112 §9.3).
		select {
		case err := <-bw.done:
			bw.done <- err
			at := bw.doneAt.Load()
			bodyDone = err == nil && at != 0 && pc.firstAt != 0 && at <= pc.firstAt
		default:
			bodyDone = false
		}
	}
	reuse = bodyDone && werr == nil && !hd.close && keepAlive
	return res
}

// headError classifies a failure to read the response head.
func headError(pc *pconn, ctx context.Context, err, werr error, stale func(error) error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if isTimeout(err) {
		return &timeoutError{"response headers"}
	}
	if _, ok := errors.AsType[*ProtocolError](err); ok {
		return err
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		if pc.r == pc.w && werr == nil {
			return stale(errNoResponse)
		}
		err = io.ErrUnexpectedEOF
	}
	if werr != nil {
		return fmt.Errorf("%w (writing the request: %v)", stale(err), werr)
	}
	return stale(err)
}

var errAbandoned = errors.New("upstream: request body not sent (the backend answered without 100 Continue)")

// release tells a writer waiting for 100 Continue whether to send.
func (bw *bodyWriter) release(send bool) {
	if bw == nil {
		return
	}
	select {
	case bw.cont <- send:
	default:
	}
}

// finish stops the body writer if it is still running, joins it, and
// returns its error (idempotent). A running writer is cut by a past write
// deadline on the upstream connection: it stops at its next write, that
// is once its read of the client's body returns (at once for a client
// still uploading; a stalled client is cut by the entrypoint's read
// timeout). The client's read deadline is not touched: a server's body
// reader need not allow it concurrently with a read.
func (bw *bodyWriter) finish(pc *pconn) error {
	if bw.joined {
		return bw.err
	}
	bw.release(false)
	select {
	case bw.err = <-bw.done:
	default:
		_ = pc.c.SetWriteDeadline(aLongTimeAgo)
		bw.err = <-bw.done
		if bw.err == nil {
			bw.err = errAbandoned
		}
	}
	bw.wait.Wait()
	bw.joined = true
	return bw.err
}

// relay1xx sends an informational response with its fields to the client
// and takes them back out of the header map (RFC 9110 §15.2; RFC 8297).
func relay1xx(w http.ResponseWriter, pc *pconn, code int) {
	hdr := w.Header()
	var added []string
	for _, f := range pc.fields {
		if hopByHop(f.name, pc.conn) {
			continue
		}
		if _, ok := hdr[f.name]; !ok {
			added = append(added, f.name)
		}
		hdr[f.name] = append(hdr[f.name], f.value)
	}
	w.WriteHeader(code)
	for _, k := range added {
		delete(hdr, k)
	}
	for _, f := range pc.fields {
		if vs := hdr[f.name]; len(vs) > 0 && vs[len(vs)-1] == f.value {
			hdr[f.name] = vs[:len(vs)-1]
			if len(hdr[f.name]) == 0 {
				delete(hdr, f.name)
			}
		}
	}
}
