package dataplane

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"
)

// StatusClientClosedRequest is the status recorded (nginx's 499) when the
// client went away before the response was sent.
const StatusClientClosedRequest = 499

// target is one server of a load-balancer service in one generation: its
// prebuilt ReverseProxy, the shared backend, its active checker (nil when the
// service has no healthCheck) and its weight.
type target struct {
	url     *url.URL // as configured (path kept for preservePath)
	backend *backend
	check   *checker
	weight  int
	proxy   *httputil.ReverseProxy
	passive *passivePolicy
}

// available reports whether the target may take traffic now: its active
// check (if any) passes and, when the service has a passiveHealthCheck,
// passive health has not taken the server out.
func (t *target) available() bool {
	if t.check != nil && !t.check.up.Load() {
		return false
	}
	return t.passive == nil || t.backend.passiveUp(nowNano)
}

func nowNano() int64 { return time.Now().UnixNano() }

// proxyOptions are the per-service settings of the prebuilt proxies.
type proxyOptions struct {
	passHost      bool
	preservePath  bool
	flushInterval time.Duration
	transport     http.RoundTripper
	buffers       httputil.BufferPool
	log           *slog.Logger
}

// newProxy builds the ReverseProxy of one server. It uses Rewrite (never
// Director), so hop-by-hop headers, including those a client names in
// Connection, are removed before Rewrite sets the forwarding headers again.
func newProxy(u *url.URL, o proxyOptions) *httputil.ReverseProxy {
	dst := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	if dst.Scheme == "h2c" {
		dst.Scheme = "http"
	}
	passHost, preserve := o.passHost, o.preservePath
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			rewrite(pr, dst, passHost, preserve)
		},
		Transport:     o.transport,
		FlushInterval: o.flushInterval,
		BufferPool:    o.buffers,
		ErrorLog:      slog.NewLogLogger(o.log.Handler(), slog.LevelDebug),
		ErrorHandler:  errorHandler{log: o.log, backend: dst.Host}.handle,
	}
}

// rewrite shapes the outbound request:
//
//   - scheme and host from the server URL; the server URL's path is ignored
//     unless preservePath is set, then joined with exactly one slash
//     (case 034, Traefik's preservePath);
//   - ';' in the query becomes '&' (Traefik's behaviour);
//   - Host is the client's unless passHostHeader is false;
//   - X-Forwarded-* and X-Real-Ip come from the (already sanitised) inbound
//     request; X-Forwarded-For gets the peer appended;
//   - an Upgrade other than websocket (h2c and anything else) is dropped,
//     so the upgrade is refused and the request served as plain HTTP
//     (reliability.md §3.1 v32);
//   - Sec-WebSocket-* headers get their RFC 6455 spelling back, since some
//     servers compare names case-sensitively (case 029).
func rewrite(pr *httputil.ProxyRequest, dst *url.URL, passHost, preservePath bool) {
	in, out := pr.In, pr.Out
	// ReverseProxy drops query parameters containing ';' before Rewrite;
	// Traefik forwards them with ';' read as '&'.
	if strings.IndexByte(in.URL.RawQuery, ';') >= 0 {
		out.URL.RawQuery = strings.ReplaceAll(in.URL.RawQuery, ";", "&")
	}
	if preservePath {
		pr.SetURL(dst)
	} else {
		out.URL.Scheme = dst.Scheme
		out.URL.Host = dst.Host
	}
	if passHost {
		out.Host = in.Host
	} else {
		out.Host = ""
	}
	for _, k := range managedHeaders {
		if v, ok := in.Header[k]; ok {
			out.Header[k] = v
		}
	}
	if ip := peerIP(in.RemoteAddr); ip != "" {
		if prior := in.Header["X-Forwarded-For"]; len(prior) > 0 {
			out.Header["X-Forwarded-For"] = []string{strings.Join(prior, ", ") + ", " + ip}
		} else {
			out.Header["X-Forwarded-For"] = []string{ip}
		}
	}
	if up := out.Header.Get("Upgrade"); up != "" {
		if !strings.EqualFold(up, "websocket") {
			out.Header.Del("Upgrade")
			out.Header.Del("Connection")
			out.Header.Del("Http2-Settings")
		} else {
			for k, v := range out.Header {
				if len(k) > 14 && k[:14] == "Sec-Websocket-" {
					delete(out.Header, k)
					out.Header["Sec-WebSocket-"+k[14:]] = v
				}
			}
		}
	}
}

// proxyWriter records what the proxy did for the service handler: the status
// sent and the forwarding error, if any. It forwards Flush and exposes the
// underlying writer through Unwrap, so http.ResponseController (used by
// ReverseProxy to flush and to hijack for upgrades) reaches the connection.
type proxyWriter struct {
	http.ResponseWriter
	status int
	err    error
	body   *clientBody // nil for requests without a body
	// mayRetry lets a dial error go unanswered (retry set) so the service
	// handler can try another server.
	mayRetry, retry bool
}

// clientBody wraps a request body to tell a failure reading from the
// client (slow or stalled upload cut by readTimeout, client gone) from a
// failure of the server (case 035: answer 408, not an ambiguous 502/504).
type clientBody struct {
	io.ReadCloser
	err error
}

func (b *clientBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// WriteHeader records the final status (a 1xx is replaced by what follows).
func (w *proxyWriter) WriteHeader(code int) {
	if w.status < 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *proxyWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush sends buffered data to the client.
func (w *proxyWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// Hijack lets the proxy take over the connection for an upgrade.
func (w *proxyWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Unwrap returns the wrapped writer.
func (w *proxyWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// errorHandler is the ErrorHandler of the proxies of one server.
type errorHandler struct {
	log     *slog.Logger
	backend string
}

// handle is the ReverseProxy ErrorHandler; see proxyError. Every error is
// logged at Debug (nothing is logged at Info on the request path).
func (eh errorHandler) handle(w http.ResponseWriter, r *http.Request, err error) {
	code := proxyError(w, r, err)
	if eh.log.Enabled(r.Context(), slog.LevelDebug) {
		eh.log.LogAttrs(r.Context(), slog.LevelDebug, "forwarding failed", slog.String("backend", eh.backend),
			slog.Int("status", code), slog.String("error", err.Error()))
	}
}

// proxyError answers a forwarding error and returns the status, mapped
// like Traefik's ComputeStatusCode (pkg/proxy/httputil/proxy.go):
//
//   - the client went away (request context canceled): 499, nothing written
//     that the client could read;
//   - reading the client's body failed: 408 on a read timeout (the
//     entrypoint's readTimeout, case 035), else 400;
//   - a timeout (dial or response headers): 504;
//   - anything else (refused, reset, EOF, bad response): 502.
func proxyError(w http.ResponseWriter, r *http.Request, err error) int {
	code := statusForError(r.Context(), err)
	pw, _ := w.(*proxyWriter)
	if pw != nil {
		pw.err = err
		if pw.mayRetry && isDialError(err) && r.Context().Err() == nil {
			pw.retry = true
			return http.StatusBadGateway
		}
		if pw.body != nil && pw.body.err != nil {
			// The client's body failed, not the server, so passive health
			// is not charged. A read timeout is answered 408; this check
			// comes before 499 because net/http cancels the request context
			// when a body read fails, yet the client is still there to read
			// the answer. Any other body error is the client gone (499) or
			// a malformed body (400).
			pw.err = nil
			switch ne, ok := errors.AsType[net.Error](pw.body.err); {
			case ok && ne.Timeout():
				code = http.StatusRequestTimeout
			case code != StatusClientClosedRequest:
				code = http.StatusBadRequest
			}
			w.Header().Set("Connection", "close")
		}
	}
	if code == StatusClientClosedRequest {
		if pw != nil {
			pw.status = code
		}
		return code
	}
	http.Error(w, http.StatusText(code), code)
	return code
}

// statusForError classifies a forwarding error.
func statusForError(ctx context.Context, err error) int {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled) {
		return StatusClientClosedRequest
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return http.StatusGatewayTimeout
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return http.StatusGatewayTimeout
	}
	return http.StatusBadGateway
}

// defaultFlushInterval is Traefik's responseForwarding.flushInterval default.
// Streams of unknown length and text/event-stream are flushed at once.
const defaultFlushInterval = 100 * time.Millisecond

// isDialError reports a failure to connect: nothing was sent to the server.
func isDialError(err error) bool {
	oe, ok := errors.AsType[*net.OpError](err)
	return ok && oe.Op == "dial"
}
