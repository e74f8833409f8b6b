package h1

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/httpwire"
)

// The serialisation of a response head and trailer section (RFC 9112
// §4, §5, §7.1.2): status line, fields, Date.

// writeTrailers writes the trailer fields of a chunked response: those the
// Trailer field announced, then those set with http.TrailerPrefix.
func (w *response) writeTrailers() {
	for _, name := range w.header["Trailer"] {
		for k := range strings.SplitSeq(name, ",") {
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
	return httpwire.IsToken(k)
}

// statusLines holds the status lines of the common codes, indexed by code
// (an array: no map lookup per response).
var statusLines = func() *[600]string {
	m := new([600]string)
	for _, c := range []int{100, 101, 102, 103, 200, 201, 202, 204, 206, 301, 302, 303, 304, 307, 308,
		400, 401, 403, 404, 405, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 421, 422, 425, 426, 428, 429, 431, 451,
		499, 500, 501, 502, 503, 504, 505} {
		m[c] = "HTTP/1.1 " + strconv.Itoa(c) + " " + http.StatusText(c) + "\r\n"
	}
	return m
}()

func (w *response) writeStatusLine(code int) {
	if code >= 0 && code < len(statusLines) && statusLines[code] != "" {
		w.bw.WriteString(statusLines[code])
		return
	}
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
// field and Connection as needed. Connection: close is announced when the
// handler asked for it, the client did, the server drains, or a request
// body is left that will not be drained.
func (w *response) sendHeader() {
	w.headerSent = true
	for _, v := range w.header["Connection"] {
		if strings.EqualFold(strings.TrimSpace(v), "close") {
			w.closeAfter = true // the handler asked to close, as net/http honours
		}
	}
	upgrade := w.status == http.StatusSwitchingProtocols
	if !upgrade {
		if w.body != nil && w.body.unreadLeft() {
			w.closeAfter = true
		}
		if d := w.cs.srv.Draining; d != nil && d() {
			w.closeAfter = true
		}
		if w.http10 && !w.keepAlive10 {
			w.closeAfter = true
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
	switch {
	case upgrade:
		for _, v := range w.header["Connection"] {
			writeField(w.bw, "Connection", v)
		}
	case w.chunked:
		w.bw.WriteString("Transfer-Encoding: chunked\r\n")
	}
	switch {
	case upgrade:
	case w.closeAfter:
		w.bw.WriteString("Connection: close\r\n")
	case w.http10:
		w.bw.WriteString("Connection: keep-alive\r\n")
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
		if strings.HasPrefix(k, http.TrailerPrefix) || !httpwire.IsToken(k) {
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

// hasLineBreak reports CR, LF or NUL in v (strings.ContainsAny builds its
// byte set on every call; this runs for every field of every response).
func hasLineBreak(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= '\r' && (c == '\r' || c == '\n' || c == 0) {
			return true
		}
	}
	return false
}

var newlineToSpace = strings.NewReplacer("\n", " ", "\r", " ", "\x00", " ")

// writeField writes "k: v\r\n"; CR, LF and NUL in v become spaces (net/http
// does so for CR and LF), so a header value cannot split the response.
func writeField(bw *bufio.Writer, k, v string) {
	bw.WriteString(k)
	bw.WriteString(": ")
	if hasLineBreak(v) {
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
