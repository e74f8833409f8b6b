// Package capture holds Buffer: a bounded, concurrency-safe copy of what a
// child process writes (its error output, its first answer), kept to be
// quoted in an error or parsed once the process has ended. It imports
// nothing of Gantry's, so every layer may use it.
package capture

import "sync"

// Buffer is an io.Writer that keeps at most max bytes of what is written
// to it, the first ones (Head) or the last ones (Tail), and drops the
// rest. Write never fails, so a child process writing more than max is not
// stopped by a broken pipe. Its methods are safe for concurrent use
// (os/exec copies a child's output in a goroutine of its own while the
// caller may already read). The zero Buffer keeps nothing: call Head or
// Tail.
type Buffer struct {
	mu   sync.Mutex
	max  int
	last bool // keep the last max bytes instead of the first
	b    []byte
}

// Head returns a Buffer keeping the first max bytes written to it.
func Head(max int) *Buffer { return &Buffer{max: max} }

// Tail returns a Buffer keeping the last max bytes written to it.
func Tail(max int) *Buffer { return &Buffer{max: max, last: true} }

// Write keeps what fits of p and returns len(p), nil.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.max <= 0:
	case !b.last:
		if room := b.max - len(b.b); room > 0 {
			b.b = append(b.b, p[:min(room, len(p))]...)
		}
	case len(p) >= b.max:
		b.b = append(b.b[:0], p[len(p)-b.max:]...)
	default:
		if over := len(b.b) + len(p) - b.max; over > 0 {
			b.b = append(b.b[:0], b.b[over:]...)
		}
		b.b = append(b.b, p...)
	}
	return len(p), nil
}

// Bytes returns a copy of the bytes kept.
func (b *Buffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.b...)
}

// String returns the bytes kept as a string.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.b)
}
