package upstream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Transport is an http.RoundTripper for HTTP/1.1 upstreams; see the package doc.
// The zero value is not usable: build one with New.
type Transport struct {
	// Fallback serves every request this transport does not handle itself.
	Fallback http.RoundTripper

	dialer            net.Dialer
	maxIdle           int
	idleTimeout       time.Duration
	respHeaderTimeout time.Duration
	hosts             sync.Map // host:port -> *hostPool
}

// Options configures New. Zero values take the defaults given.
type Options struct {
	DialTimeout           time.Duration // default 30s
	ResponseHeaderTimeout time.Duration // 0: none; Gantry passes a finite one (504 on expiry)
	IdleConnTimeout       time.Duration // default 90s; idle connections older than this are not reused
	MaxIdleConnsPerHost   int           // default 200; negative disables keep-alive
}

// New returns a Transport that falls back to fallback for what it does not handle.
func New(fallback http.RoundTripper, o Options) *Transport {
	if o.DialTimeout <= 0 {
		o.DialTimeout = 30 * time.Second
	}
	if o.IdleConnTimeout <= 0 {
		o.IdleConnTimeout = 90 * time.Second
	}
	if o.MaxIdleConnsPerHost == 0 {
		o.MaxIdleConnsPerHost = 200
	}
	return &Transport{
		Fallback:          fallback,
		dialer:            net.Dialer{Timeout: o.DialTimeout, KeepAlive: 30 * time.Second},
		maxIdle:           o.MaxIdleConnsPerHost,
		idleTimeout:       o.IdleConnTimeout,
		respHeaderTimeout: o.ResponseHeaderTimeout,
	}
}

type hostPool struct{ idle chan *pconn }

type pconn struct {
	c      net.Conn
	br     *bufio.Reader
	bw     *bufio.Writer
	idleAt time.Time
	reused bool
}

var errStaleConn = errors.New("upstream: reused connection closed by server")

// Handles reports whether RoundTrip serves r itself rather than Fallback.
func Handles(r *http.Request) bool {
	if r.URL.Scheme != "http" {
		return false
	}
	if len(r.Trailer) > 0 || r.Header.Get("Upgrade") != "" || r.Header.Get("Expect") != "" {
		return false
	}
	// Requests with a body go to the standard Transport: it writes the body
	// while it reads the response, so a backend that answers early (413,
	// 401) without reading the upload gets its answer through instead of
	// deadlocking the write (review of the fast path).
	return r.Body == nil || r.Body == http.NoBody
}

// RoundTrip sends r and returns the response; see http.RoundTripper. Errors
// are the dial, write or read error; a context cancellation returns the
// context's error, and an expired response-header timeout returns a
// net.Error whose Timeout() is true. A request that failed on a reused
// connection the server had closed before answering is retried once on a
// new connection when it is replayable as net/http defines it (GET, HEAD,
// OPTIONS or TRACE, or an Idempotency-Key header).
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !Handles(r) {
		return t.Fallback.RoundTrip(r)
	}
	ctx := r.Context()
	hp := t.pool(r.URL.Host)
	for attempt := 0; ; attempt++ {
		pc, err := t.get(ctx, hp, r.URL.Host)
		if err != nil {
			return nil, err
		}
		resp, err := t.exchange(ctx, hp, pc, r)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, errStaleConn) && attempt == 0 && replayable(r) {
			continue
		}
		return nil, err
	}
}

// replayable reports whether a bodyless request may be sent again after
// it possibly reached the server (net/http's Request.isReplayable).
func replayable(r *http.Request) bool {
	switch r.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, ok := r.Header["Idempotency-Key"]
	if !ok {
		_, ok = r.Header["X-Idempotency-Key"]
	}
	return ok
}

func (t *Transport) pool(host string) *hostPool {
	if v, ok := t.hosts.Load(host); ok {
		return v.(*hostPool)
	}
	n := max(t.maxIdle, 0)
	v, _ := t.hosts.LoadOrStore(host, &hostPool{idle: make(chan *pconn, n)})
	return v.(*hostPool)
}

func (t *Transport) get(ctx context.Context, hp *hostPool, host string) (*pconn, error) {
	for {
		select {
		case pc := <-hp.idle:
			// An idle connection the server closed, reset, or wrote to
			// (bytes nobody asked for must never become the next client's
			// response) is dropped; one non-blocking peek tells.
			if time.Since(pc.idleAt) > t.idleTimeout || pc.br.Buffered() > 0 || !alive(pc.c) {
				pc.c.Close()
				continue
			}
			pc.reused = true
			return pc, nil
		default:
		}
		return t.dial(ctx, host)
	}
}

func (t *Transport) dial(ctx context.Context, host string) (*pconn, error) {
	c, err := t.dialer.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	return &pconn{c: c, br: bufio.NewReaderSize(c, 4096), bw: bufio.NewWriterSize(c, 4096)}, nil
}

// put returns pc to the idle pool, or closes it when the pool is full.
func (t *Transport) put(hp *hostPool, pc *pconn) {
	if pc.br.Buffered() > 0 {
		pc.c.Close() // bytes beyond the response: the framing cannot be trusted
		return
	}
	pc.idleAt = time.Now()
	select {
	case hp.idle <- pc:
	default:
		pc.c.Close()
	}
}

// CloseIdleConnections closes every idle connection (used when a backend
// leaves the configuration).
func (t *Transport) CloseIdleConnections() {
	t.hosts.Range(func(_, v any) bool {
		hp := v.(*hostPool)
		for {
			select {
			case pc := <-hp.idle:
				pc.c.Close()
			default:
				return true
			}
		}
	})
	if ci, ok := t.Fallback.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

var aLongTimeAgo = time.Unix(1, 0)

func (t *Transport) exchange(ctx context.Context, hp *hostPool, pc *pconn, r *http.Request) (*http.Response, error) {
	stop := context.AfterFunc(ctx, func() { pc.c.SetDeadline(aLongTimeAgo) })
	fail := func(err error) (*http.Response, error) {
		stop()
		pc.c.Close()
		return nil, err
	}
	if err := writeRequest(pc.bw, r, t.maxIdle <= 0); err != nil {
		if pc.reused && !isLocal(err) {
			return fail(fmt.Errorf("%w: %v", errStaleConn, err))
		}
		return fail(err)
	}
	if t.respHeaderTimeout > 0 {
		pc.c.SetReadDeadline(time.Now().Add(t.respHeaderTimeout))
	}
	if pc.reused {
		if _, err := pc.br.Peek(1); err != nil {
			if isTimeout(err) {
				return fail(err)
			}
			return fail(fmt.Errorf("%w: %v", errStaleConn, err))
		}
	}
	var resp *http.Response
	for {
		var err error
		resp, err = http.ReadResponse(pc.br, r)
		if err != nil {
			return fail(err)
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		// 1xx informational (100, 103): skip, as http.Transport does by default.
		resp.Body.Close()
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return fail(errors.New("upstream: unexpected 101 Switching Protocols"))
	}
	if t.respHeaderTimeout > 0 {
		pc.c.SetReadDeadline(time.Time{})
		if ctx.Err() != nil {
			// cancelled while the deadline was being cleared: the AfterFunc's
			// past deadline may have been overwritten
			resp.Body.Close()
			return fail(ctx.Err())
		}
	}
	keep := !resp.Close && !r.Close && t.maxIdle > 0
	if resp.Body == http.NoBody {
		if stop() && keep {
			t.put(hp, pc)
		} else {
			pc.c.Close()
		}
		return resp, nil
	}
	resp.Body = &body{rc: resp.Body, t: t, hp: hp, pc: pc, stop: stop, keep: keep}
	return resp, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// isLocal reports errors raised before anything reached the wire
// (invalid header values), which must not be retried.
func isLocal(err error) bool { return errors.Is(err, errInvalidHeader) }

// body hands the connection back on EOF, and closes it on an early Close.
type body struct {
	rc   io.ReadCloser
	t    *Transport
	hp   *hostPool
	pc   *pconn
	stop func() bool
	keep bool
	done bool
}

func (b *body) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.finish(true)
	} else if err != nil {
		b.finish(false)
	}
	return n, err
}

func (b *body) Close() error {
	if !b.done {
		b.finish(false)
	}
	return nil
}

func (b *body) finish(complete bool) {
	b.done = true
	if b.stop() && complete && b.keep {
		b.t.put(b.hp, b.pc)
		return
	}
	b.pc.c.Close()
}

var errInvalidHeader = errors.New("upstream: invalid header")

// writeRequest serialises r, a bodyless request, as an HTTP/1.1 request
// head (RFC 9112 §3). Header names and values are validated.
func writeRequest(w *bufio.Writer, r *http.Request, closeConn bool) error {
	host := r.Host
	if host == "" {
		host = r.URL.Host
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
	w.WriteString(r.URL.RequestURI())
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(host)
	w.WriteString("\r\n")
	for k, vs := range r.Header {
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Trailer", "Connection":
			continue
		case "User-Agent":
			if len(vs) == 0 || vs[0] == "" {
				continue
			}
		}
		if !httpguts.ValidHeaderFieldName(k) {
			return fmt.Errorf("%w: name %q", errInvalidHeader, k)
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return fmt.Errorf("%w: value of %s", errInvalidHeader, k)
			}
			w.WriteString(k)
			w.WriteString(": ")
			w.WriteString(v)
			w.WriteString("\r\n")
		}
	}
	if closeConn || r.Close {
		w.WriteString("Connection: close\r\n")
	}
	// Only bodyless requests get here (Handles); POST, PUT and PATCH still
	// announce their empty body.
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		w.WriteString("Content-Length: 0\r\n")
	}
	w.WriteString("\r\n")
	return w.Flush()
}
