package dnshelper

import (
	"bufio"
	"io"
)

// lineReader reads lines of at most max bytes; a longer line is cut at max
// (the rest is dropped).
type lineReader struct {
	r   io.Reader
	br  *bufio.Reader
	max int
}

// next returns the next line without its newline; ok is false at the end
// of the input or on a read error.
func (l *lineReader) next() (line []byte, ok bool) {
	if l.br == nil {
		l.br = bufio.NewReaderSize(l.r, 4096)
	}
	var buf []byte
	for {
		frag, err := l.br.ReadSlice('\n')
		if len(buf) < l.max {
			buf = append(buf, frag[:min(len(frag), l.max-len(buf))]...)
		}
		switch err {
		case nil:
			return trimNewline(buf), true
		case bufio.ErrBufferFull:
			continue
		default:
			if len(buf) > 0 {
				return trimNewline(buf), true
			}
			return nil, false
		}
	}
}

func trimNewline(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}
