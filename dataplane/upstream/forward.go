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
	// End is when the exchange ended, when its connection went back to
	// the idle pool (that clock reading serves the caller too); zero
	// otherwise.
	End time.Time
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

var errTooMany1xx = &ProtocolError{Msg: "more than 16 informational responses"}

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
	start := ob.Start
	if start.IsZero() {
		start = time.Now()
	}
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

func (h *Host) exchange(pc *pconn, w http.ResponseWriter, ob *Outbound, start time.Time, up bool) (res Result) {
	r := ob.Req
	ctx := r.Context()
	pc.begin(ctx)
	reuse := false
	defer func() {
		pc.br.release()
		ok := pc.end()
		if reuse && ok {
			res.End = time.Now()
			h.put(pc, res.End)
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
	body := hasBody(r)
	expect := body && expects100(r)
	bw, bodyDone, werr, err := h.send(pc, w, ob, keepAlive, up, expect, stale)
	if err != nil {
		return Result{Err: err}
	}
	if bw != nil {
		defer func() {
			if bw.finish(pc) != nil {
				bodyDone = false
			}
		}()
	}
	var expectTimer *time.Timer
	if expect {
		expectTimer = time.AfterFunc(h.c.o.ExpectContinueTimeout, func() { bw.release(true) })
		defer expectTimer.Stop()
	}
	if err := h.headPhase(pc, start, body, bw == nil); err != nil {
		return Result{Err: err}
	}
	var hd head
	limit := h.c.o.MaxResponseHeaderBytes
	if err := readFinalHead(pc, w, r, &hd, limit, bw, expectTimer, start, &res.TTFB); err != nil {
		if err == errTooMany1xx {
			return Result{Err: err}
		}
		if bw != nil {
			// The upload's own failure explains a cut connection (and
			// net/http cancels the request when its body read fails).
			if _, ok := errors.AsType[*ClientError](bw.finish(pc)); ok {
				return Result{Err: bw.err}
			}
		}
		return Result{Err: headError(pc, ctx, err, werr, stale)}
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
	if err := h.relayResponse(pc, w, &hd, limit, start, &res); err != nil {
		res.Err = err // res.Sent tells whether the head went out
		return res
	}
	if bw != nil {
		bodyDone = bw.sentBeforeAnswer(pc)
	}
	reuse = bodyDone && werr == nil && !hd.close && keepAlive
	return res
}

// headPhase prepares pc for the response head: the response-header
// timeout (from the end of the request head: start when there is no body,
// now after one), a yield before the first read when the request was sent
// whole (sent), and the 32 KiB buffer when the last response needed it.
func (h *Host) headPhase(pc *pconn, start time.Time, body, sent bool) error {
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
	if sent {
		// The request is out whole. Yield once before the first read:
		// under load the backend's answer usually arrives while other
		// goroutines run, and the read finds it instead of failing with
		// EAGAIN and parking the goroutine for a netpoll wake-up (get1k:
		// 0.64 -> 0.21 EAGAIN reads per request); with nothing else to
		// run, Gosched returns at once.
		runtime.Gosched()
	}
	if err := pc.phase(deadline, now); err != nil {
		return err
	}
	if pc.wantBig {
		// The last response here needed reads beyond its head's: this
		// head is read into the 32 KiB body buffer, with what follows.
		pc.br = bodyReader{pc: pc}
		pc.br.grow()
	}
	return nil
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
