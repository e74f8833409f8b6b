package h1

import (
	"bufio"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
)

// response is the fast path's http.ResponseWriter (and http.Flusher). It
// must not be used after the handler returns, as net/http requires.
type response struct {
	bw     *bufio.Writer
	req    *http.Request
	header http.Header

	status      int
	wroteHeader bool // WriteHeader (final status) called
	headerSent  bool // status line and fields written to bw
	bodyAllowed bool
	chunked     bool
	cl          int64 // declared Content-Length; -1 unknown
	written     int64 // body bytes accepted
	pending     []byte
	closeAfter  bool
	err         error
}

var errShortBody = errors.New("h1: handler wrote less than its Content-Length")

func (w *response) Header() http.Header { return w.header }

// WriteHeader records the status; 1xx other than 101 is sent at once as an
// informational response with the current header fields (RFC 9110 §15.2).
func (w *response) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic("h1: invalid WriteHeader code " + strconv.Itoa(code))
	}
	if w.wroteHeader {
		return
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		w.writeStatusLine(code)
		w.writeFields(false)
		w.bw.WriteString("\r\n")
		w.err = w.bw.Flush()
		return
	}
	w.wroteHeader = true
	w.status = code
	w.bodyAllowed = code != http.StatusNoContent && code != http.StatusNotModified && w.req.Method != http.MethodHead
	if v := w.header.Get("Content-Length"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			w.cl = n
		} else {
			w.header.Del("Content-Length")
		}
	}
	if _, ok := w.header["Trailer"]; ok && w.cl < 0 {
		w.chunked = w.bodyAllowed
	}
}

// Write sends body bytes; see the package doc for the framing chosen.
func (w *response) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.err != nil {
		return 0, w.err
	}
	if !w.bodyAllowed {
		if w.req.Method == http.MethodHead {
			w.written += int64(len(p)) // announced as Content-Length, as net/http does
			return len(p), nil
		}
		return 0, http.ErrBodyNotAllowed
	}
	switch {
	case w.cl >= 0:
		if !w.headerSent {
			w.sendHeader()
		}
		n := len(p)
		var err error
		if rem := w.cl - w.written; int64(n) > rem {
			p, err = p[:rem], http.ErrContentLength
		}
		m, werr := w.bw.Write(p)
		w.written += int64(m)
		if werr != nil {
			w.err = werr
			return m, werr
		}
		if err != nil {
			return m, err
		}
		return n, nil
	case !w.headerSent && !w.chunked && len(w.pending)+len(p) <= BufferSize:
		w.pending = append(w.pending, p...)
		w.written += int64(len(p))
		return len(p), nil
	default:
		if !w.headerSent {
			w.chunked = true
			w.sendHeader()
			w.writeChunk(w.pending)
			w.pending = nil
		}
		w.writeChunk(p)
		w.written += int64(len(p))
		if w.err != nil {
			return 0, w.err
		}
		return len(p), nil
	}
}

// Flush sends the header (switching to chunked when the length is not
// known) and everything buffered.
func (w *response) Flush() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.headerSent {
		if w.cl < 0 && w.bodyAllowed {
			w.chunked = true
		}
		w.sendHeader()
		if w.chunked {
			w.writeChunk(w.pending)
			w.pending = nil
		}
	}
	if w.err == nil {
		w.err = w.bw.Flush()
	}
}

// FlushError is Flush reporting the write error (http.ResponseController).
func (w *response) FlushError() error {
	w.Flush()
	return w.err
}

// finish completes the response after the handler returned.
func (w *response) finish() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.headerSent {
		switch {
		case w.cl < 0 && !w.chunked && w.bodyAllowed:
			w.cl = int64(len(w.pending))
			w.header["Content-Length"] = []string{strconv.Itoa(len(w.pending))}
		case w.cl < 0 && w.req.Method == http.MethodHead && w.written > 0:
			w.header["Content-Length"] = []string{strconv.FormatInt(w.written, 10)}
		}
		w.sendHeader()
		if w.chunked {
			w.writeChunk(w.pending)
		} else if w.bodyAllowed {
			w.bw.Write(w.pending)
		}
		w.pending = nil
	}
	if w.chunked {
		w.bw.WriteString("0\r\n")
		w.writeTrailers()
		w.bw.WriteString("\r\n")
	}
	if w.cl >= 0 && w.bodyAllowed && w.written < w.cl {
		w.closeAfter = true
		w.err = errShortBody
	}
	if err := w.bw.Flush(); err != nil && w.err == nil {
		w.err = err
	}
	return w.err
}

func (w *response) writeChunk(p []byte) {
	if len(p) == 0 || w.err != nil {
		return
	}
	w.bw.WriteString(strconv.FormatInt(int64(len(p)), 16))
	w.bw.WriteString("\r\n")
	w.bw.Write(p)
	_, w.err = w.bw.WriteString("\r\n")
}

func (w *response) writeTrailers() {
	for _, name := range w.header["Trailer"] {
		for _, k := range strings.Split(name, ",") {
			k = http.CanonicalHeaderKey(strings.TrimSpace(k))
			if !trailerAllowed(k) {
				continue
			}
			for _, v := range w.header[k] {
				writeField(w.bw, k, v)
			}
		}
	}
	for k, vs := range w.header {
		if name, ok := strings.CutPrefix(k, http.TrailerPrefix); ok && trailerAllowed(name) {
			for _, v := range vs {
				writeField(w.bw, name, v)
			}
		}
	}
}

// trailerAllowed rejects names that are not tokens and the framing fields
// a trailer must not carry (RFC 9110 §6.5.1), as net/http does.
func trailerAllowed(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Content-Length", "Transfer-Encoding", "Trailer", "Host", "Connection":
		return false
	}
	return httpguts.ValidHeaderFieldName(k)
}

func (w *response) writeStatusLine(code int) {
	w.bw.WriteString("HTTP/1.1 ")
	w.bw.WriteString(strconv.Itoa(code))
	w.bw.WriteByte(' ')
	text := http.StatusText(code)
	if text == "" {
		text = "status code " + strconv.Itoa(code)
	}
	w.bw.WriteString(text)
	w.bw.WriteString("\r\n")
}

// sendHeader writes the status line and fields, adding Date, the framing
// field and Connection: close as needed.
func (w *response) sendHeader() {
	w.headerSent = true
	for _, v := range w.header["Connection"] {
		if strings.EqualFold(strings.TrimSpace(v), "close") {
			w.closeAfter = true // the handler asked to close, as net/http honours
		}
	}
	w.writeStatusLine(w.status)
	if w.chunked || !w.bodyAllowed && w.req.Method != http.MethodHead {
		delete(w.header, "Content-Length")
	}
	w.writeFields(true)
	if _, ok := w.header["Date"]; !ok {
		w.bw.WriteString("Date: ")
		w.bw.WriteString(httpDate())
		w.bw.WriteString("\r\n")
	}
	if w.chunked {
		w.bw.WriteString("Transfer-Encoding: chunked\r\n")
	}
	if w.closeAfter {
		w.bw.WriteString("Connection: close\r\n")
	}
	w.bw.WriteString("\r\n")
}

// writeFields writes the header fields, skipping framing fields that
// sendHeader owns and trailer placeholders.
func (w *response) writeFields(final bool) {
	for k, vs := range w.header {
		switch k {
		case "Transfer-Encoding", "Connection":
			continue
		}
		if strings.HasPrefix(k, http.TrailerPrefix) || !httpguts.ValidHeaderFieldName(k) {
			continue
		}
		if !final && k == "Content-Length" {
			continue
		}
		for _, v := range vs {
			writeField(w.bw, k, v)
		}
	}
}

var newlineToSpace = strings.NewReplacer("\n", " ", "\r", " ")

// writeField writes "k: v\r\n"; CR and LF in v become spaces, as in
// net/http, so a header value cannot split the response.
func writeField(bw *bufio.Writer, k, v string) {
	bw.WriteString(k)
	bw.WriteString(": ")
	if strings.ContainsAny(v, "\r\n") {
		v = newlineToSpace.Replace(v)
	}
	bw.WriteString(v)
	bw.WriteString("\r\n")
}

var dateCache atomic.Pointer[dateEntry]

type dateEntry struct {
	sec int64
	s   string
}

// httpDate returns the current time in IMF-fixdate (RFC 9110 §5.6.7),
// recomputed at most once a second.
func httpDate() string {
	now := time.Now()
	if d := dateCache.Load(); d != nil && d.sec == now.Unix() {
		return d.s
	}
	d := &dateEntry{sec: now.Unix(), s: now.UTC().Format(http.TimeFormat)}
	dateCache.Store(d)
	return d.s
}
