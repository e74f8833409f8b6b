package tcpudp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// A stream exchange: the client's first streamHeaderLen bytes tell the
// stream server what to do: seeds and lengths of the two streams (client
// to server, server to client), the order (streamMode) and, when above 0,
// a pause in microseconds after each chunk the server reads (a slow
// reader). Each stream is the seed's ChaCha8 bytes, written and read in
// chunks of random sizes, so that both ends check every byte.
const streamHeaderLen = 6 * 8

// streamMode is the order of the two streams of an exchange.
type streamMode uint64

const (
	bothAtOnce   streamMode = iota // both directions at once
	clientFirst                    // the client sends and half-closes, then the server sends
	serverFirst                    // the server sends and half-closes, then the client sends
	serverStream                   // the server sends only, without reading the client's end first
)

// exchange is one stream exchange's parameters.
type exchange struct {
	mode                   streamMode
	up, down               int64  // bytes client -> server, server -> client
	upSeed, downSeed       uint64 // seeds of the two streams
	serverPause, readPause time.Duration
}

func (x exchange) header() []byte {
	b := make([]byte, 0, streamHeaderLen)
	for _, v := range []uint64{uint64(x.mode), uint64(x.up), uint64(x.down), x.upSeed, x.downSeed, uint64(x.serverPause.Microseconds())} {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	return b
}

func parseExchange(b []byte) exchange {
	v := func(i int) uint64 { return binary.BigEndian.Uint64(b[i*8:]) }
	return exchange{mode: streamMode(v(0)), up: int64(v(1)), down: int64(v(2)), upSeed: v(3), downSeed: v(4), serverPause: time.Duration(v(5)) * time.Microsecond}
}

// sendStream writes n bytes of seed's stream to w in chunks of random
// sizes (1 byte to 128 KiB).
func sendStream(w io.Writer, seed uint64, n int64) error {
	gen := rand.NewChaCha8(seedKey(seed))
	sizes := rand.New(rand.NewPCG(seed, 1))
	buf := make([]byte, 128<<10)
	for n > 0 {
		k := min(int64(chunkSize(sizes)), n)
		_, _ = gen.Read(buf[:k])
		if _, err := w.Write(buf[:k]); err != nil {
			return fmt.Errorf("send at %d bytes before the end: %w", n, err)
		}
		n -= k
	}
	return nil
}

// chunkSize is a random chunk size: often tiny, often large.
func chunkSize(r *rand.Rand) int {
	switch r.IntN(4) {
	case 0:
		return 1 + r.IntN(16)
	case 1:
		return 1 + r.IntN(4<<10)
	default:
		return 1 + r.IntN(128<<10)
	}
}

func seedKey(seed uint64) (k [32]byte) {
	binary.BigEndian.PutUint64(k[:], seed)
	return k
}

// checkStream reads r to its end in chunks of random sizes, pausing after
// each when pause > 0, and reports the first byte that differs from seed's
// stream of n bytes, a short stream or bytes past its end.
func checkStream(r io.Reader, seed uint64, n int64, pause time.Duration) error {
	gen := rand.NewChaCha8(seedKey(seed))
	sizes := rand.New(rand.NewPCG(seed, 2))
	got, want := make([]byte, 128<<10), make([]byte, 128<<10)
	var off int64
	for {
		k, err := r.Read(got[:chunkSize(sizes)])
		if k > 0 {
			if off+int64(k) > n {
				return fmt.Errorf("%d bytes past the stream's end (%d bytes)", off+int64(k)-n, n)
			}
			_, _ = gen.Read(want[:k])
			if i := firstDiff(got[:k], want[:k]); i >= 0 {
				return fmt.Errorf("byte %d of %d differs: %#x, want %#x", off+int64(i), n, got[i], want[i])
			}
			off += int64(k)
			if pause > 0 {
				time.Sleep(pause)
			}
		}
		if errors.Is(err, io.EOF) {
			if off != n {
				return fmt.Errorf("stream ended after %d of %d bytes", off, n)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("read after %d of %d bytes: %w", off, n, err)
		}
	}
}

func firstDiff(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// halfCloser is a connection whose write side closes alone.
type halfCloser interface {
	net.Conn
	CloseWrite() error
}

// runExchange plays one side of x on c: the client's (server false) or
// the server's. It half-closes c when its stream is sent and returns the
// first error of either stream.
func runExchange(c halfCloser, x exchange, server bool) error {
	outSeed, outN, inSeed, inN, pause := x.upSeed, x.up, x.downSeed, x.down, x.readPause
	if server {
		outSeed, outN, inSeed, inN, pause = x.downSeed, x.down, x.upSeed, x.up, x.serverPause
	}
	send := func() error {
		if err := sendStream(c, outSeed, outN); err != nil {
			return err
		}
		return c.CloseWrite()
	}
	check := func() error { return checkStream(c, inSeed, inN, pause) }
	first, second := send, check
	switch {
	case x.mode == serverStream:
		if server {
			return send()
		}
		return check()
	case x.mode == bothAtOnce:
		var wg sync.WaitGroup
		var serr error
		wg.Go(func() { serr = send() })
		cerr := check()
		wg.Wait()
		return errors.Join(serr, cerr)
	case (x.mode == clientFirst) == server:
		first, second = check, send
	}
	if err := first(); err != nil {
		return err
	}
	return second()
}

// streamServer serves stream exchanges (serveStream), sending each one's
// outcome to results. A connection that ends before its first byte is no
// exchange (gantry's readiness probe, routed before the test's clients)
// and gives no outcome.
func streamServer(results chan<- error) func(*net.TCPConn) {
	return func(c *net.TCPConn) {
		if err := serveStream(c); !errors.Is(err, errNoExchange) {
			results <- err
		}
	}
}

// errNoExchange: the connection ended before its first byte.
var errNoExchange = errors.New("no exchange: the connection ended before its first byte")

// serveStream plays the server's side of the exchange c's header asks for
// and returns its outcome: nil, or what went wrong on the server's side.
func serveStream(c halfCloser) error {
	_ = c.SetDeadline(time.Now().Add(2 * time.Minute))
	hdr := make([]byte, streamHeaderLen)
	if _, err := io.ReadFull(c, hdr); err == io.EOF {
		return errNoExchange
	} else if err != nil {
		return fmt.Errorf("stream header: %w", err)
	}
	return runExchange(c, parseExchange(hdr), true)
}

// clientExchange sends x's header on c and plays the client's side of x.
func clientExchange(c halfCloser, x exchange) error {
	_ = c.SetDeadline(time.Now().Add(2 * time.Minute))
	if _, err := c.Write(x.header()); err != nil {
		return err
	}
	return runExchange(c, x, false)
}
