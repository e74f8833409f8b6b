package dataplane

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"time"
)

// reqRecord is the per-request record the observer wrapper keeps; the
// service handler fills in the upstream.
type reqRecord struct {
	upstream string
	retries  int
}

type recordKey struct{}

func recordOf(r *http.Request) *reqRecord {
	rec, _ := r.Context().Value(recordKey{}).(*reqRecord)
	return rec
}

// recoverHandler is the outermost layer of every router chain: a panic in
// a middleware or the proxy is logged with its stack and answered 500 (if
// nothing was written yet). http.ErrAbortHandler is re-panicked so net/http
// aborts the connection quietly, as it should.
type recoverHandler struct {
	next   http.Handler
	log    *slog.Logger
	router string
}

func (h *recoverHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
			panic(v)
		}
		buf := make([]byte, 8<<10)
		buf = buf[:runtime.Stack(buf, false)]
		h.log.Error("panic while serving request", "router", h.router, "panic", fmt.Sprint(v), "stack", string(buf))
		w.Header().Set("Connection", "close")
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
	}()
	h.next.ServeHTTP(w, r)
}

// observeHandler reports each finished request to the Observer.
type observeHandler struct {
	next    http.Handler
	obs     Observer
	router  string
	service string
}

func (h *observeHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &reqRecord{}
	rw := &recordWriter{ResponseWriter: w}
	r = r.WithContext(context.WithValue(r.Context(), recordKey{}, rec))
	defer func() {
		ev := RequestEvent{
			Start:          start,
			Duration:       time.Since(start),
			Router:         h.router,
			Service:        h.service,
			Upstream:       rec.upstream,
			Retries:        rec.retries,
			Method:         r.Method,
			Host:           r.Host,
			Path:           r.URL.Path,
			Proto:          r.Proto,
			ClientAddr:     r.RemoteAddr,
			Status:         rw.status,
			BytesOut:       rw.bytes,
			TLS:            r.TLS != nil,
			Header:         r.Header,
			ResponseHeader: w.Header(),
		}
		if ci := connInfoOf(r); ci != nil {
			ev.EntryPoint = ci.entryPoint
		}
		if r.TLS != nil {
			ev.TLSVersion, ev.TLSCipher = r.TLS.Version, r.TLS.CipherSuite
		}
		if ev.Status == 0 && r.Context().Err() != nil {
			ev.Status = StatusClientClosedRequest // nothing was sent: the client went away
		}
		if ev.Status == 0 {
			ev.Status = http.StatusOK
		}
		h.obs.Request(&ev)
	}()
	h.next.ServeHTTP(rw, r)
}

// recordWriter counts the status and body bytes sent to the client.
type recordWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

// WriteHeader records the final status (a 1xx is replaced by what follows).
func (w *recordWriter) WriteHeader(code int) {
	if w.status < 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recordWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Flush sends buffered data to the client.
func (w *recordWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// Hijack takes over the connection (WebSocket upgrades); the request is
// then recorded as 101 Switching Protocols, which the proxy writes on the
// hijacked connection itself.
func (w *recordWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil && w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	return c, rw, err
}

// Unwrap returns the wrapped writer.
func (w *recordWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// epDispatch picks the chain of the entrypoint the request came in on, so
// entryPoints.<ep>.http.middlewares apply only there; requests from other
// entrypoints (or from no Server) use def.
type epDispatch struct {
	byEP map[string]http.Handler
	def  http.Handler
}

func (d *epDispatch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if ci := connInfoOf(r); ci != nil {
		if h, ok := d.byEP[ci.entryPoint]; ok {
			h.ServeHTTP(w, r)
			return
		}
	}
	d.def.ServeHTTP(w, r)
}
