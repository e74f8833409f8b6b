package h1

import (
	"bufio"
	"bytes"
	"testing"
)

// A field value carrying CR, LF or NUL cannot split the response: they
// are written as spaces; other values go out as they are.
func TestWriteFieldCannotSplit(t *testing.T) {
	for v, want := range map[string]string{
		"one\r\nX-Injected: 1": "X-A: one  X-Injected: 1\r\n",
		"nul\x00byte":          "X-A: nul byte\r\n",
		"lf\nonly":             "X-A: lf only\r\n",
		"tab\tand \x7f kept":   "X-A: tab\tand \x7f kept\r\n",
		"":                     "X-A: \r\n",
	} {
		var buf bytes.Buffer
		bw := bufio.NewWriter(&buf)
		writeField(bw, "X-A", v)
		bw.Flush()
		if buf.String() != want {
			t.Errorf("writeField(%q) = %q, want %q", v, buf.String(), want)
		}
	}
}

// Status lines: the common codes from the table, any other three-digit
// code with a generated reason phrase.
func TestWriteStatusLine(t *testing.T) {
	for code, want := range map[int]string{
		200: "HTTP/1.1 200 OK\r\n",
		101: "HTTP/1.1 101 Switching Protocols\r\n",
		504: "HTTP/1.1 504 Gateway Timeout\r\n",
		299: "HTTP/1.1 299 status code 299\r\n",
		599: "HTTP/1.1 599 status code 599\r\n",
		600: "HTTP/1.1 600 status code 600\r\n",
		999: "HTTP/1.1 999 status code 999\r\n",
	} {
		var buf bytes.Buffer
		w := &response{bw: bufio.NewWriter(&buf)}
		w.writeStatusLine(code)
		w.bw.Flush()
		if buf.String() != want {
			t.Errorf("writeStatusLine(%d) = %q, want %q", code, buf.String(), want)
		}
	}
}
