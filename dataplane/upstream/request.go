package upstream

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/httpwire"
	"golang.org/x/net/http/httpguts"
)

// Outbound is one request as it leaves for a backend. The proxy fills it
// per request (it is meant to live in a pooled per-request object); the
// Client reads it and never keeps it after Forward returns.
//
// The request head is serialised from Req without copying its header map:
// Req.Method, the escaped Req.URL path (PathPrefix joined before it with
// one slash) and Req.URL.RawQuery (';' written as '&', Traefik's reading),
// Host, then every field of Req.Header except the connection-specific ones
// (Connection, Keep-Alive, Proxy-Connection, Transfer-Encoding, Upgrade,
// Http2-Settings, Trailer, TE other than "trailers") and those Forward
// writes itself (Host, Content-Length, X-Forwarded-For). The client's
// hop-by-hop fields, including those its Connection header lists, are
// removed on arrival, before the middlewares run (case 028), so the fields
// a middleware added always reach the backend. Sec-WebSocket-* fields get
// their RFC 6455 spelling back (case 029).
type Outbound struct {
	Req *http.Request
	// Host is the Host field sent; "" sends the backend's address.
	Host string
	// PathPrefix is joined before the request path (preservePath); "" none.
	PathPrefix string
	// ClientIP, when not "", is appended to X-Forwarded-For (the inbound
	// values joined with ", ").
	ClientIP string
	// Start is when the caller began this attempt (its own clock reading,
	// so the request costs one fewer); zero: Forward reads the clock.
	// Result.TTFB and the response-header timeout run from it.
	Start time.Time
}

var errInvalidHeader = errors.New("upstream: invalid request header")

// isUpgrade reports a WebSocket upgrade request: Upgrade: websocket. Only
// websocket is ever forwarded (reliability.md §3.1 v32: h2c and other
// tokens are dropped on arrival or here).
func isUpgrade(r *http.Request) bool {
	v := r.Header["Upgrade"]
	return len(v) == 1 && strings.EqualFold(strings.TrimSpace(v[0]), "websocket")
}

// hasBody reports whether r carries a body to send.
func hasBody(r *http.Request) bool {
	return r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
}

// expects100 reports "Expect: 100-continue" on a request with a body.
func expects100(r *http.Request) bool {
	v := r.Header["Expect"]
	return len(v) == 1 && strings.EqualFold(v[0], "100-continue")
}

// writeHead serialises the request head of ob into w (not flushed): the
// request line, Host (ob.Host, else addr), the fields (writeFields,
// writeXFF), Connection (close when closeConn, a WebSocket upgrade when
// upgrade) and the body framing (writeFraming).
func writeHead(w *bufio.Writer, ob *Outbound, addr string, closeConn, upgrade bool) error {
	r := ob.Req
	host := ob.Host
	if host == "" {
		host = addr
	}
	if !httpguts.ValidHostHeader(host) {
		return fmt.Errorf("%w: host %q", errInvalidHeader, host)
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	w.WriteString(method)
	w.WriteByte(' ')
	writeTarget(w, r, ob.PathPrefix)
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(host)
	w.WriteString("\r\n")
	body := hasBody(r)
	if err := writeFields(w, r.Header, body); err != nil {
		return err
	}
	if err := writeXFF(w, r.Header["X-Forwarded-For"], ob.ClientIP); err != nil {
		return err
	}
	switch {
	case upgrade:
		w.WriteString("Connection: Upgrade\r\nUpgrade: websocket\r\n")
	case closeConn:
		// The client's own Connection: close is about its connection,
		// not this one.
		w.WriteString("Connection: close\r\n")
	}
	writeFraming(w, r, method, body)
	_, err := w.WriteString("\r\n")
	return err
}

// writeFields writes the request's fields but the hop-by-hop and framing
// ones, Host and X-Forwarded-For (written apart): Te only as "trailers",
// Expect only with a body, Sec-WebSocket-* in RFC 6455's spelling. A name
// that is not a token or a value with a control byte is errInvalidHeader.
func writeFields(w *bufio.Writer, header http.Header, body bool) error {
	for k, vs := range header {
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Trailer", "Connection", "Keep-Alive",
			"Proxy-Connection", "Upgrade", "Http2-Settings", "X-Forwarded-For":
			continue
		case "Te":
			if len(vs) == 1 && strings.EqualFold(vs[0], "trailers") {
				w.WriteString("Te: trailers\r\n")
			}
			continue
		case "Expect":
			if !body {
				continue
			}
		case "User-Agent":
			if len(vs) == 0 || vs[0] == "" {
				continue
			}
		}
		if !httpwire.IsToken(k) {
			return fmt.Errorf("%w: name %q", errInvalidHeader, k)
		}
		name := k
		if len(k) > 14 && k[:14] == "Sec-Websocket-" {
			name = "" // written below with its RFC 6455 spelling
		}
		for _, v := range vs {
			if !httpwire.ValidFieldValue(v) {
				return fmt.Errorf("%w: value of %s", errInvalidHeader, k)
			}
			if name == "" {
				w.WriteString("Sec-WebSocket-")
				w.WriteString(k[14:])
			} else {
				w.WriteString(name)
			}
			w.WriteString(": ")
			w.WriteString(v)
			w.WriteString("\r\n")
		}
	}
	return nil
}

// writeXFF writes X-Forwarded-For: the values the request carries (set by
// the entrypoint's policy), then the client's address.
func writeXFF(w *bufio.Writer, xff []string, clientIP string) error {
	if len(xff) > 0 || clientIP != "" {
		w.WriteString("X-Forwarded-For: ")
		for i, v := range xff {
			if !httpwire.ValidFieldValue(v) {
				return fmt.Errorf("%w: value of X-Forwarded-For", errInvalidHeader)
			}
			if i > 0 {
				w.WriteString(", ")
			}
			w.WriteString(v)
		}
		if clientIP != "" {
			if len(xff) > 0 {
				w.WriteString(", ")
			}
			w.WriteString(clientIP)
		}
		w.WriteString("\r\n")
	}
	return nil
}

// writeFraming writes the body framing: Content-Length for a known length,
// else chunked (with the Trailer announcement); no body is
// "Content-Length: 0" for the methods that usually carry one.
func writeFraming(w *bufio.Writer, r *http.Request, method string, body bool) {
	switch {
	case body && r.ContentLength > 0:
		w.WriteString("Content-Length: ")
		w.Write(strconv.AppendInt(w.AvailableBuffer(), r.ContentLength, 10)) // no string allocated
		w.WriteString("\r\n")
	case body:
		w.WriteString("Transfer-Encoding: chunked\r\n")
		if len(r.Trailer) > 0 {
			w.WriteString("Trailer: ")
			i := 0
			for k := range r.Trailer {
				if i > 0 {
					w.WriteString(", ")
				}
				w.WriteString(k)
				i++
			}
			w.WriteString("\r\n")
		}
	default:
		switch method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
			w.WriteString("Content-Length: 0\r\n")
		}
	}
}

// writeTarget writes the origin-form request target.
func writeTarget(w *bufio.Writer, r *http.Request, prefix string) {
	u := r.URL
	if r.Method == http.MethodOptions && u.Path == "*" && prefix == "" {
		w.WriteByte('*')
		return
	}
	p := u.EscapedPath()
	switch {
	case prefix != "":
		w.WriteString(strings.TrimSuffix(prefix, "/"))
		if !strings.HasPrefix(p, "/") {
			w.WriteByte('/')
		}
		w.WriteString(p)
	case p == "":
		w.WriteByte('/')
	case p[0] != '/':
		w.WriteByte('/')
		w.WriteString(p)
	default:
		w.WriteString(p)
	}
	if q := u.RawQuery; q != "" || u.ForceQuery {
		w.WriteByte('?')
		for {
			i := strings.IndexByte(q, ';')
			if i < 0 {
				w.WriteString(q)
				break
			}
			w.WriteString(q[:i])
			w.WriteByte('&')
			q = q[i+1:]
		}
	}
}

// ClientError is a failure reading the client's request body: the client
// is slow, gone or sent a malformed body, not the backend's fault.
type ClientError struct{ Err error }

func (e *ClientError) Error() string { return "upstream: reading the client's body: " + e.Err.Error() }
func (e *ClientError) Unwrap() error { return e.Err }

// writeSmallBody reads a body of known length (len(buf) bytes, at most
// syncBodyMax) whole, then sends it after the head pc.bw holds, in one
// writev on a TCP connection. The client's body is read with reads sized
// to what is left of it. A body shorter than its Content-Length is a
// ClientError(io.ErrUnexpectedEOF); bytes beyond it are not read.
func writeSmallBody(pc *pconn, r *http.Request, buf []byte) error {
	if _, err := io.ReadFull(r.Body, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return &ClientError{err}
	}
	return pc.sendWith(buf)
}

// writeBody copies the request body to w with the framing writeHead
// announced, flushing as the client's data arrives (an upload is streamed,
// never buffered whole). Client read errors are *ClientError; a body
// shorter than its Content-Length is a ClientError(io.ErrUnexpectedEOF).
func writeBody(w *bufio.Writer, r *http.Request, buf []byte) error {
	chunked := r.ContentLength < 0
	var sent int64
	for {
		n, rerr := r.Body.Read(buf)
		if n > 0 {
			if !chunked && sent+int64(n) > r.ContentLength {
				n = int(r.ContentLength - sent)
				rerr = io.EOF
			}
			sent += int64(n)
			if chunked {
				w.WriteString(strconv.FormatInt(int64(n), 16))
				w.WriteString("\r\n")
			}
			w.Write(buf[:n])
			if chunked {
				w.WriteString("\r\n")
			}
			if rerr == nil {
				if err := w.Flush(); err != nil {
					return err
				}
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return &ClientError{rerr}
		}
	}
	if !chunked && sent < r.ContentLength {
		return &ClientError{io.ErrUnexpectedEOF}
	}
	if chunked {
		w.WriteString("0\r\n")
		for k, vs := range r.Trailer {
			if !httpwire.IsToken(k) {
				continue
			}
			for _, v := range vs {
				if httpwire.ValidFieldValue(v) {
					w.WriteString(k)
					w.WriteString(": ")
					w.WriteString(v)
					w.WriteString("\r\n")
				}
			}
		}
		w.WriteString("\r\n")
	}
	return w.Flush()
}
