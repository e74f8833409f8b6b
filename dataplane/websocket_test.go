package dataplane

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gorilla/websocket"
)

// rawWSBackend is a WebSocket echo backend on raw TCP, so the test sees the
// header names exactly as the proxy spelled them. It answers 403 when the
// Origin is "https://evil.test", else 101 with Sec-WebSocket-Accept and the
// requested protocol, then echoes WebSocket frames via gorilla.
type rawWSBackend struct {
	l    net.Listener
	mu   sync.Mutex
	seen []string // raw header lines of each handshake
	wg   sync.WaitGroup
}

func newRawWSBackend(t testing.TB) *rawWSBackend {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &rawWSBackend{l: l}
	b.wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			b.wg.Go(func() { b.serve(c) })
		}
	})
	t.Cleanup(func() { l.Close(); b.wg.Wait() })
	return b
}

func (b *rawWSBackend) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	tp := textproto.NewReader(br)
	if _, err := tp.ReadLine(); err != nil {
		return
	}
	var lines []string
	hdr := http.Header{}
	for {
		l, err := tp.ReadLine()
		if err != nil {
			return
		}
		if l == "" {
			break
		}
		lines = append(lines, l)
		k, v, _ := strings.Cut(l, ":")
		hdr.Add(k, strings.TrimSpace(v))
	}
	b.mu.Lock()
	b.seen = append(b.seen, strings.Join(lines, "\n"))
	b.mu.Unlock()
	if hdr.Get("Origin") == "https://evil.test" {
		io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 9\r\nConnection: close\r\n\r\nforbidden")
		return
	}
	fmt.Fprintf(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\nSec-WebSocket-Protocol: %s\r\n\r\n",
		acceptKey(hdr.Get("Sec-Websocket-Key")), hdr.Get("Sec-Websocket-Protocol"))
	// Echo frames: unmask client frames and send them back unmasked.
	for {
		op, payload, err := readFrame(br)
		if err != nil {
			return
		}
		if op == 8 { // close
			writeFrame(c, 8, payload)
			return
		}
		if err := writeFrame(c, op, payload); err != nil {
			return
		}
	}
}

func (b *rawWSBackend) handshakes() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.seen...)
}

// Case 029: the upgrade reaches the backend with RFC 6455 header spellings
// and X-Forwarded-Proto ws; the 101 and its headers reach the client; a
// non-101 answer is relayed as is; an established connection survives 20
// configuration swaps (and a swap that edits its own router); new
// handshakes during the swaps succeed.
func TestWebSocketThroughSwaps(t *testing.T) {
	be := newRawWSBackend(t)
	obs := &dptest.Recorder{}
	h := newHarness(t, nil, obs)
	cfg := func(wsExtra, other string) string {
		return fmt.Sprintf(`
http:
  routers:
    ws@file: {rule: "Host(`+"`chat.example.com`"+`)", service: chat@file%s}
    other@file: {rule: "Host(`+"`other%s.test`"+`)", service: chat@file}
  services:
    chat@file: {loadBalancer: {servers: [{url: "http://%s"}]}}
`, wsExtra, other, be.l.Addr())
	}
	h.Apply(cfg("", ""), generation.Options{})

	dialer := websocket.Dialer{NetDial: func(_, _ string) (net.Conn, error) { return net.Dial("tcp", h.Addr("web")) }}
	hdr := http.Header{"Origin": {"https://chat.example.com"}}
	dialer.Subprotocols = []string{"chat.v1"}
	conn, resp, err := dialer.Dial("ws://chat.example.com/socket", hdr)
	if err != nil {
		t.Fatalf("handshake: %v (resp %v)", err, resp)
	}
	defer conn.Close()
	if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != "chat.v1" {
		t.Errorf("client got Sec-WebSocket-Protocol %q, want chat.v1", got)
	}
	hs := be.handshakes()[0]
	for _, want := range []string{"Sec-WebSocket-Key: ", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Protocol: chat.v1", "Upgrade: websocket", "Connection: Upgrade", "X-Forwarded-Proto: ws"} {
		if !strings.Contains(hs, want) {
			t.Errorf("backend handshake lacks %q:\n%s", want, hs)
		}
	}
	echo := func(c *websocket.Conn, msg string) {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			t.Fatalf("write %q: %v", msg, err)
		}
		_, got, err := c.ReadMessage()
		if err != nil || string(got) != msg {
			t.Fatalf("echo %q: got %q, %v", msg, got, err)
		}
	}
	echo(conn, "before")
	if ev, ok := obs.Find(func(e observe.RequestEvent) bool { return e.Router == "ws@file" }); ok {
		t.Errorf("upgraded request reported before it ended: %+v", ev)
	}
	for i := range 20 {
		wsExtra := ""
		if i == 19 {
			wsExtra = ", priority: 1000" // the ws router itself is edited
		}
		h.Apply(cfg(wsExtra, fmt.Sprint(i)), generation.Options{})
		echo(conn, fmt.Sprint("during ", i))
		if i%5 == 0 {
			c2, _, err := dialer.Dial("ws://chat.example.com/socket", hdr)
			if err != nil {
				t.Fatalf("new handshake during swap %d: %v", i, err)
			}
			echo(c2, "fresh")
			c2.Close()
		}
	}
	echo(conn, "after")

	// A non-101 answer is relayed, not turned into 502.
	_, resp, err = dialer.Dial("ws://chat.example.com/socket", http.Header{"Origin": {"https://evil.test"}})
	if err == nil || resp == nil || resp.StatusCode != 403 {
		t.Errorf("forbidden handshake: got resp %v err %v, want 403 relayed", resp, err)
	}

	c3, _, err := dialer.Dial("ws://chat.example.com/socket", hdr)
	if err != nil {
		t.Fatal(err)
	}
	c3.Close()
	dptest.Eventually(t, "the closed WebSocket reported as 101", func() bool {
		_, ok := obs.Find(func(e observe.RequestEvent) bool {
			return e.Router == "ws@file" && e.Status == http.StatusSwitchingProtocols
		})
		return ok
	})

	// The router and service removed: the open connection stays (Traefik
	// keeps it); a new handshake gets 404.
	h.Apply(`http: {}`, generation.Options{})
	echo(conn, "after removal")
	if _, resp, err := dialer.Dial("ws://chat.example.com/socket", hdr); err == nil || resp == nil || resp.StatusCode != 404 {
		t.Errorf("handshake after removal: resp %v err %v, want 404", resp, err)
	}
}

// Minimal RFC 6455 framing for the raw backend (payloads < 64 KiB).
func readFrame(r *bufio.Reader) (op byte, payload []byte, err error) {
	h := make([]byte, 2)
	if _, err = io.ReadFull(r, h); err != nil {
		return
	}
	op = h[0] & 0x0f
	n := int(h[1] & 0x7f)
	if n == 126 {
		ext := make([]byte, 2)
		if _, err = io.ReadFull(r, ext); err != nil {
			return
		}
		n = int(ext[0])<<8 | int(ext[1])
	}
	var mask [4]byte
	if h[1]&0x80 != 0 {
		if _, err = io.ReadFull(r, mask[:]); err != nil {
			return
		}
	}
	payload = make([]byte, n)
	if _, err = io.ReadFull(r, payload); err != nil {
		return
	}
	for i := range payload {
		payload[i] ^= mask[i%4]
	}
	return
}

func writeFrame(w io.Writer, op byte, payload []byte) error {
	h := []byte{0x80 | op}
	if len(payload) < 126 {
		h = append(h, byte(len(payload)))
	} else {
		h = append(h, 126, byte(len(payload)>>8), byte(len(payload)))
	}
	_, err := w.Write(append(h, payload...))
	return err
}

// A backend that ends an upgraded stream (half-close) is seen by the
// client as end of stream, while the client can still send.
func TestUpgradeHalfClose(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan string, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		http.ReadRequest(br)
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nbye")
		c.(*net.TCPConn).CloseWrite()
		b, _ := io.ReadAll(br)
		got <- string(b)
	}()
	h := newHarness(t, nil, nil)
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: "http://%s"}]}}}
`, l.Addr()), generation.Options{})
	c, err := net.Dial("tcp", h.Addr("web"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "bye" {
		t.Fatalf("client read %q, %v; want bye then end of stream", rest, err)
	}
	io.WriteString(c, "still here")
	c.(*net.TCPConn).CloseWrite()
	select {
	case s := <-got:
		if s != "still here" {
			t.Errorf("backend got %q after its half-close, want the client's bytes", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("backend never saw the client's end of stream")
	}
}
