package h1

import (
	"errors"
	"io"
	"net"
	"time"
)

// watchAfter is how long a handler runs before the connection is watched
// for the client going away. Fast requests (most) never pay for a watch;
// slow ones (long polls, streams, a slow upstream) get net/http's
// behaviour: the request context is cancelled when the client leaves.
const watchAfter = 100 * time.Millisecond

var (
	aLongTimeAgo  = time.Unix(1, 0)
	noIdleTimeout = time.Unix(2, 0)
)

// startWatch arms the watch for the bodyless request whose handler is
// about to run (see watchTimer). Under rdMu.
func (cs *conn) startWatch() {
	cs.watching = true
	cs.watchSeq++
	cs.watchOn = true
	if cs.watchArmed {
		return // armed for an earlier request: it re-arms for this one
	}
	cs.watchArmed, cs.watchArmSeq = true, cs.watchSeq
	if cs.watchTimer != nil {
		cs.watchTimer.Reset(watchAfter)
		return
	}
	cs.watchDone = make(chan struct{}, 1)
	gen := cs.watchGen
	cs.watchTimer = time.AfterFunc(watchAfter, func() { cs.watchFired(gen) })
}

// watchFired runs on the goroutine of the timer made in generation gen: it
// starts the watch when the request it was armed for is still in its
// handler, re-arms for a later request, or lets the timer rest.
func (cs *conn) watchFired(gen uint16) {
	cs.rdMu.Lock()
	switch {
	case cs.watchGen != gen: // dropped when the connection parked
		cs.rdMu.Unlock()
		return
	case !cs.watchOn || cs.watchCut:
		cs.watchArmed = false
		cs.rdMu.Unlock()
		return
	case cs.watchSeq != cs.watchArmSeq:
		cs.watchArmSeq = cs.watchSeq
		cs.watchTimer.Reset(watchAfter)
		cs.rdMu.Unlock()
		return
	}
	cs.watchArmed, cs.watchRunning = false, true
	// A bodyless request leaves the idle wait's read deadline in place
	// (serveOne does not clear it, to save a deadline change per request):
	// the watch clears it, unless the handler set its own.
	if !cs.userReadDeadline {
		cs.setReadDeadline(time.Time{})
	}
	cs.rdMu.Unlock()
	cs.watch()
	cs.watchDone <- struct{}{}
}

// watch runs on the timer's goroutine while the handler of a bodyless
// request runs. A read that returns bytes keeps them (a pipelined request).
// End of file (the client half-closed, or left) cancels the request's
// context, as net/http does, and the response is still sent before the
// connection closes; an error (reset) cancels it and no response is
// attempted. The deadline set by endWatch ends a watch quietly.
func (cs *conn) watch() {
	if cs.w >= len(cs.buf) {
		return // the buffer is full of pipelined bytes: nothing to watch
	}
	n, err := cs.c.Read(cs.buf[cs.w:])
	cs.w += n
	if n == 0 && err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return
		}
		if errors.Is(err, io.EOF) {
			cs.halfClosed = true
		} else {
			cs.peerGone = true
		}
		cs.reqCtx.cancel(nil)
	}
}

// endWatch stops the watch of the current request, waiting for a running
// one to end. Idempotent.
func (cs *conn) endWatch() {
	if !cs.watching {
		return
	}
	cs.watching = false
	cs.rdMu.Lock()
	cs.watchOn = false
	running := cs.watchRunning
	if running {
		cs.watchCut = true
		cs.setReadDeadline(aLongTimeAgo)
	}
	cs.rdMu.Unlock()
	if !running {
		return // no watch started; one that fires later finds watchOn false
	}
	<-cs.watchDone
	cs.rdMu.Lock()
	cs.watchRunning = false
	cs.setReadDeadline(time.Time{})
	cs.rdMu.Unlock()
}
