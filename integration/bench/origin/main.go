// Command origin is the benchmark's backend: an HTTP/1.1 server that answers
// every route with pre-built bytes, so that it costs as little CPU per
// request as possible and the proxies in front of it, not the origin, are
// what run.sh measures. One goroutine per connection, one read buffer per
// connection, no allocation per request.
//
// Routes (any method unless noted):
//
//	/1k       200, Content-Length: 1024, 1 KiB body
//	/upload   the request body (Content-Length or chunked, at most -maxbody
//	          bytes) is read and dropped, then 200 with "ok\n"
//	/chunk64k 200, Transfer-Encoding: chunked, 64 KiB in 16 chunks of 4 KiB
//	/ws       WebSocket (RFC 6455) upgrade, then every data frame is echoed
//	          back with the same opcode; ping is answered with pong, close
//	          with close
//	anything else: 404
//
// Keep-alive and pipelining are supported; "Connection: close" closes after
// the response. A malformed request gets 400 and the connection is closed.
// Listens on -addr (loopback only is meant); run.sh starts it. With -tcp,
// -echo, -udp and -otlp it also serves the layer-4 routes and receives traces
// (l4.go, otlp.go).
package main

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
)

var (
	resp1k, respUpload, respChunk, resp404, resp400 []byte
)

func init() {
	resp1k = append([]byte("HTTP/1.1 200 OK\r\nServer: origin\r\nContent-Type: text/html\r\nContent-Length: 1024\r\n\r\n"), bytes.Repeat([]byte("x"), 1024)...)
	respUpload = []byte("HTTP/1.1 200 OK\r\nServer: origin\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nok\n")
	var c bytes.Buffer
	c.WriteString("HTTP/1.1 200 OK\r\nServer: origin\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
	chunk := bytes.Repeat([]byte("c"), 4096)
	for range 16 {
		c.WriteString("1000\r\n")
		c.Write(chunk)
		c.WriteString("\r\n")
	}
	c.WriteString("0\r\n\r\n")
	respChunk = c.Bytes()
	resp404 = []byte("HTTP/1.1 404 Not Found\r\nServer: origin\r\nContent-Length: 0\r\n\r\n")
	resp400 = []byte("HTTP/1.1 400 Bad Request\r\nServer: origin\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
}

func main() {
	addr := flag.String("addr", "127.0.0.1:19080", "listen address")
	maxBody := flag.Int64("maxbody", 1<<20, "largest request body accepted on /upload, bytes")
	tcpAddr := flag.String("tcp", "", "also serve short TCP connections here (see serveShort)")
	tcpResp := flag.Int("tcpresp", 256, "reply size of -tcp, bytes")
	echoAddr := flag.String("echo", "", "also echo TCP connections here (tcpbulk)")
	udpAddr := flag.String("udp", "", "also echo UDP datagrams here")
	otlpAddr := flag.String("otlp", "", "also receive OTLP/HTTP traces here (see otlp.go)")
	flag.Parse()
	if *tcpAddr != "" {
		l, err := net.Listen("tcp", *tcpAddr)
		if err != nil {
			log.Fatal(err)
		}
		go serveShort(l, *tcpResp)
	}
	if *echoAddr != "" {
		l, err := net.Listen("tcp", *echoAddr)
		if err != nil {
			log.Fatal(err)
		}
		go echoTCP(l)
	}
	if *udpAddr != "" {
		u, err := net.ListenPacket("udp", *udpAddr)
		if err != nil {
			log.Fatal(err)
		}
		go echoUDP(u)
	}
	if *otlpAddr != "" {
		l, err := net.Listen("tcp", *otlpAddr)
		if err != nil {
			log.Fatal(err)
		}
		go serveOTLP(l)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "origin listening on %s\n", ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go serve(c, *maxBody)
	}
}

const maxHead = 16 << 10

var errBad = errors.New("malformed request")

// conn is one client connection with its read buffer: buf[r:w] is unread.
type conn struct {
	c    net.Conn
	buf  []byte
	r, w int
}

// fill reads more bytes into buf, compacting first when it is full.
func (c *conn) fill() error {
	if c.r > 0 && c.w == len(c.buf) {
		copy(c.buf, c.buf[c.r:c.w])
		c.w -= c.r
		c.r = 0
	}
	if c.w == len(c.buf) {
		return errBad
	}
	n, err := c.c.Read(c.buf[c.w:])
	c.w += n
	if n > 0 {
		return nil
	}
	return err
}

// skip drops n bytes of body.
func (c *conn) skip(n int64) error {
	for n > 0 {
		if c.r == c.w {
			c.r, c.w = 0, 0
			if err := c.fill(); err != nil {
				return err
			}
		}
		k := int64(c.w - c.r)
		if k > n {
			k = n
		}
		c.r += int(k)
		n -= k
	}
	return nil
}

// line returns the next CRLF-terminated line (without CRLF).
func (c *conn) line() ([]byte, error) {
	for {
		if i := bytes.Index(c.buf[c.r:c.w], []byte("\r\n")); i >= 0 {
			l := c.buf[c.r : c.r+i]
			c.r += i + 2
			return l, nil
		}
		if c.w-c.r > maxHead {
			return nil, errBad
		}
		if err := c.fill(); err != nil {
			return nil, err
		}
	}
}

// skipChunked drops a chunked body and its trailers.
func (c *conn) skipChunked(max int64) error {
	var total int64
	for {
		l, err := c.line()
		if err != nil {
			return err
		}
		if i := bytes.IndexByte(l, ';'); i >= 0 {
			l = l[:i]
		}
		n, ok := parseUint(bytes.TrimSpace(l), 16)
		if !ok {
			return errBad
		}
		if total += n; total > max {
			return errBad
		}
		if n == 0 {
			for { // trailers up to the empty line
				l, err := c.line()
				if err != nil {
					return err
				}
				if len(l) == 0 {
					return nil
				}
			}
		}
		if err := c.skip(n + 2); err != nil {
			return err
		}
	}
}

func serve(nc net.Conn, maxBody int64) {
	defer nc.Close()
	c := &conn{c: nc, buf: make([]byte, 32<<10)}
	for {
		if c.r == c.w {
			c.r, c.w = 0, 0
		}
		reqLine, err := c.line()
		if err != nil {
			return
		}
		if len(reqLine) == 0 { // tolerated empty line between requests (RFC 9112 §2.2)
			continue
		}
		sp1 := bytes.IndexByte(reqLine, ' ')
		sp2 := bytes.LastIndexByte(reqLine, ' ')
		if sp1 < 0 || sp2 <= sp1 {
			nc.Write(resp400)
			return
		}
		path := reqLine[sp1+1 : sp2]
		if q := bytes.IndexByte(path, '?'); q >= 0 {
			path = path[:q]
		}
		var route byte
		switch string(path) { // no allocation: the compiler compares in place
		case "/1k":
			route = '1'
		case "/upload":
			route = 'u'
		case "/chunk64k":
			route = 'c'
		case "/ws":
			route = 'w'
		}
		var (
			clen             int64 = -1
			chunked, closing bool
			wsKey            []byte
		)
		for {
			h, err := c.line()
			if err != nil {
				return
			}
			if len(h) == 0 {
				break
			}
			colon := bytes.IndexByte(h, ':')
			if colon <= 0 {
				nc.Write(resp400)
				return
			}
			name, val := h[:colon], bytes.TrimSpace(h[colon+1:])
			switch {
			case bytes.EqualFold(name, []byte("Content-Length")):
				n, ok := parseUint(val, 10)
				if !ok || (clen >= 0 && clen != n) {
					nc.Write(resp400)
					return
				}
				clen = n
			case bytes.EqualFold(name, []byte("Transfer-Encoding")):
				chunked = bytes.EqualFold(val, []byte("chunked"))
				if !chunked {
					nc.Write(resp400)
					return
				}
			case bytes.EqualFold(name, []byte("Connection")):
				closing = closing || containsFold(val, "close")
			case bytes.EqualFold(name, []byte("Sec-WebSocket-Key")):
				wsKey = append(wsKey[:0], val...)
			}
		}
		if chunked && clen >= 0 {
			nc.Write(resp400)
			return
		}
		switch {
		case chunked:
			err = c.skipChunked(maxBody)
		case clen > maxBody:
			err = errBad
		case clen > 0:
			err = c.skip(clen)
		}
		if err != nil {
			if errors.Is(err, errBad) {
				nc.Write(resp400)
			}
			return
		}
		switch route {
		case '1':
			_, err = nc.Write(resp1k)
		case 'u':
			_, err = nc.Write(respUpload)
		case 'c':
			_, err = nc.Write(respChunk)
		case 'w':
			if wsKey == nil {
				nc.Write(resp400)
				return
			}
			websocket(c, wsKey)
			return
		default:
			_, err = nc.Write(resp404)
		}
		if err != nil || closing {
			return
		}
	}
}

const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// websocket answers the upgrade (RFC 6455 §4.2.2) and echoes frames until
// the client closes. Frames from the client are masked (§5.3); the echo is
// not. Fragmented messages are echoed frame by frame.
func websocket(c *conn, key []byte) {
	sum := sha1.Sum(append(key, wsGUID...))
	accept := base64.StdEncoding.EncodeToString(sum[:])
	if _, err := io.WriteString(c.c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "+accept+"\r\n\r\n"); err != nil {
		return
	}
	out := make([]byte, 0, len(c.buf)+14)
	need := func(n int) bool {
		for c.w-c.r < n {
			if c.r > 0 {
				copy(c.buf, c.buf[c.r:c.w])
				c.w -= c.r
				c.r = 0
			}
			if err := c.fill(); err != nil {
				return false
			}
		}
		return true
	}
	for {
		if !need(2) {
			return
		}
		b0, b1 := c.buf[c.r], c.buf[c.r+1]
		op := b0 & 0x0f
		masked := b1&0x80 != 0
		plen := int(b1 & 0x7f)
		hl := 2
		switch plen {
		case 126:
			if !need(4) {
				return
			}
			plen = int(c.buf[c.r+2])<<8 | int(c.buf[c.r+3])
			hl = 4
		case 127:
			return // 64-bit lengths are beyond what the benchmark sends
		}
		if !masked || plen > len(c.buf)-hl-4 {
			return
		}
		if !need(hl + 4 + plen) {
			return
		}
		mask := c.buf[c.r+hl : c.r+hl+4]
		payload := c.buf[c.r+hl+4 : c.r+hl+4+plen]
		for i := range payload {
			payload[i] ^= mask[i&3]
		}
		if op == 0x9 { // ping -> pong
			b0 = b0&0xf0 | 0xA
		}
		out = append(out[:0], b0)
		switch {
		case plen < 126:
			out = append(out, byte(plen))
		default:
			out = append(out, 126, byte(plen>>8), byte(plen))
		}
		out = append(out, payload...)
		c.r += hl + 4 + plen
		if op == 0xA { // unsolicited pong: no answer
			continue
		}
		if _, err := c.c.Write(out); err != nil || op == 0x8 {
			return
		}
	}
}

// parseUint parses a non-empty unsigned number in base 10 or 16 of at most
// 15 digits, without allocating.
func parseUint(b []byte, base int64) (int64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, ch := range b {
		var d int64
		switch {
		case '0' <= ch && ch <= '9':
			d = int64(ch - '0')
		case base == 16 && 'a' <= ch|0x20 && ch|0x20 <= 'f':
			d = int64(ch|0x20-'a') + 10
		default:
			return 0, false
		}
		n = n*base + d
	}
	return n, true
}

// containsFold reports whether b contains the lower-case ASCII word w,
// ignoring case.
func containsFold(b []byte, w string) bool {
	for i := 0; i+len(w) <= len(b); i++ {
		if bytes.EqualFold(b[i:i+len(w)], []byte(w)) {
			return true
		}
	}
	return false
}
