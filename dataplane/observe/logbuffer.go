package observe

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Access-log buffering, after nginx's `access_log … buffer=64k flush=1s`:
// lines are appended to one bounded buffer and written in large writes,
// when it holds FlushBytes or half its line bound, every FlushInterval, on
// Flush (SIGUSR1's reopen flushes first) and when AccessLog.Run stops
// (shutdown). A request never waits for the disk: a line that does not fit
// is dropped and counted.
const (
	// FlushBytes wakes the writer (bytes buffered).
	FlushBytes = 64 << 10
	// FlushInterval is the longest a line waits in memory.
	FlushInterval = time.Second
	// maxBufferedBytes bounds the buffer whatever the line bound (bytes):
	// lines carry client-controlled headers when fields.headers keeps them.
	maxBufferedBytes = 4 << 20
	// maxKeptBuffer: a buffer that grew past this while the writer was
	// late is released after its write rather than reused (bytes).
	maxKeptBuffer = 1 << 20
)

// logBuffer is the bounded buffer of formatted lines between the request
// goroutines (add) and the writer (flush). Two slices alternate: add
// appends to cur under mu while flush writes the previous one, so a write
// never holds mu.
type logBuffer struct {
	mu       sync.Mutex
	cur      []byte // lines waiting, each ending in '\n'
	lines    int    // lines in cur
	maxLines int    // bound on lines waiting besides those being written (accessLog.bufferingSize)
	wake     chan struct{}

	wmu   sync.Mutex // serialises flushes: one writer at a time, in order
	spare []byte     // the slice last written, reused as the next cur; under wmu
}

func newLogBuffer(maxLines int) *logBuffer {
	return &logBuffer{maxLines: maxLines, wake: make(chan struct{}, 1), cur: make([]byte, 0, FlushBytes)}
}

// add appends line (which ends in '\n'); false when the buffer is full and
// the line was dropped.
func (b *logBuffer) add(line []byte) bool {
	b.mu.Lock()
	if b.lines >= b.maxLines || len(b.cur)+len(line) > maxBufferedBytes {
		b.mu.Unlock()
		return false
	}
	b.cur = append(b.cur, line...)
	b.lines++
	kick := len(b.cur) >= FlushBytes || b.lines >= (b.maxLines+1)/2
	b.mu.Unlock()
	if kick {
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
	return true
}

// flush writes every line added before it was called to w, in one write.
// With after set (under wmu, after the write) it runs after as well, so no
// other flush writes in between (the reopen of a rotated file).
func (b *logBuffer) flush(w io.Writer, after func() error) error {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	b.mu.Lock()
	out := b.cur
	next := b.spare[:0]
	if cap(next) > maxKeptBuffer { // a burst grew it: do not keep the memory
		next = make([]byte, 0, FlushBytes)
	}
	b.cur, b.lines = next, 0
	b.mu.Unlock()
	var err error
	if len(out) > 0 {
		if _, werr := w.Write(out); werr != nil {
			err = fmt.Errorf("access log: write: %w", werr)
		}
	}
	b.spare = out[:0]
	if after != nil {
		if aerr := after(); aerr != nil && err == nil {
			err = aerr
		}
	}
	return err
}
