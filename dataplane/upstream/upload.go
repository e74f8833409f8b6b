package upstream

import (
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

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

// send writes the request head and, when it has one, the request body:
// a small one (up to syncBodyMax, no Expect) here, with the head, any
// other on a goroutine started with startBody (bw, which the caller
// finishes). bodyDone reports a body already sent whole (or none); werr a
// failed small-body write, after which the response may still come (the
// backend may have answered early). err ends the exchange: the head could
// not be written, or the client's body failed (*ClientError).
func (h *Host) send(pc *pconn, w http.ResponseWriter, ob *Outbound, keepAlive, up, expect bool, stale func(error) error) (bw *bodyWriter, bodyDone bool, werr, err error) {
	r := ob.Req
	if err := writeHead(pc.bw, ob, h.addr, !keepAlive, up); err != nil {
		pc.bw.Reset(&pc.cw)
		return nil, false, nil, err
	}
	body := hasBody(r)
	if body && !expect && r.ContentLength > 0 && r.ContentLength <= syncBodyMax {
		b := copyBufs.Get().(*[32 << 10]byte)
		werr = writeSmallBody(pc, r, b[:r.ContentLength])
		copyBufs.Put(b)
		if ce, ok := errors.AsType[*ClientError](werr); ok {
			return nil, false, nil, ce
		}
		if werr != nil {
			return nil, false, stale(werr), nil
		}
		return nil, true, nil, nil
	}
	if err := pc.bw.Flush(); err != nil {
		return nil, false, nil, stale(err)
	}
	if !body {
		return nil, true, nil, nil
	}
	_ = http.NewResponseController(w).EnableFullDuplex()
	pc.watch() // the writer may block: cancellation must reach it
	return startBody(pc, r, expect), false, nil, nil
}

// startBody starts the goroutine that writes r's body to pc after the
// head (expect: only once release(true) lets it), and returns its
// bodyWriter. The goroutine ends with the body; bw.wait joins it.
func startBody(pc *pconn, r *http.Request, expect bool) *bodyWriter {
	bw := &bodyWriter{done: make(chan error, 1), cont: make(chan bool, 1)}
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
	return bw
}

// sentBeforeAnswer reports whether the whole body was written before the
// answer began: only then is the connection reused, since a backend that
// answered first may not have read it, and may close (or reset) the
// connection (RFC 9112 §9.3).
func (bw *bodyWriter) sentBeforeAnswer(pc *pconn) bool {
	select {
	case err := <-bw.done:
		bw.done <- err
		at := bw.doneAt.Load()
		return err == nil && at != 0 && pc.firstAt != 0 && at <= pc.firstAt
	default:
		return false
	}
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
