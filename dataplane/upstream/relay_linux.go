//go:build linux

package upstream

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// relay copies src to dst until src's end of file (nil) or an error. A
// src with a file descriptor (plain TCP) is read through its RawConn, and
// the 32 KiB buffer is taken from copyBufs only when bytes are there, so a
// quiet tunnel holds none (io.Copy held a new 32 KiB buffer per direction
// for the tunnel's life). Otherwise (TLS) it is io.Copy. (A yield before
// each read, as Forward does before reading a response, did not change
// the reads per echoed message in integration/bench's ws route: 3.9-4.0
// either way, the load client sharing the proxy's core.)
func relay(dst io.Writer, src io.Reader) error {
	sc, ok := src.(syscall.Conn)
	if !ok {
		_, err := io.Copy(dst, src)
		return err
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		_, err := io.Copy(dst, src)
		return err
	}
	var (
		buf  *[32 << 10]byte
		n    int
		rerr error
	)
	read := func(fd uintptr) bool {
		b := copyBufs.Get().(*[32 << 10]byte)
		for {
			m, err := unix.Read(int(fd), b[:])
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN:
				copyBufs.Put(b)
				return false
			}
			buf, n, rerr = b, max(m, 0), err
			return true
		}
	}
	for {
		if err := raw.Read(read); err != nil {
			return err // closed (the other direction ended the tunnel) or a deadline
		}
		if rerr != nil || n == 0 {
			copyBufs.Put(buf)
			if rerr != nil {
				return os.NewSyscallError("read", rerr)
			}
			return nil
		}
		_, werr := dst.Write(buf[:n])
		copyBufs.Put(buf)
		if werr != nil {
			return werr
		}
	}
}
