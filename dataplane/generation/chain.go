package generation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/dataplane/conninfo"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/dataplane/proxy"
	"github.com/gantry-proxy/gantry/router"
)

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

// observeHandler reports each finished request to the Observer (nil:
// none) and traces it (tracing nil: not traced).
type observeHandler struct {
	next                   http.Handler
	obs                    observe.Observer
	tracing                *observe.Tracing
	router, service, rule  string
	noAccessLog, noMetrics bool // the router's observability options
}

func (h *observeHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ex := proxy.GetExchange(w)
	var tr *observe.Trace
	if h.tracing != nil {
		ep := ""
		if ci := conninfo.Of(r); ci != nil {
			ep = ci.EntryPoint
		}
		r, tr = h.tracing.Start(r, ep, h.router, h.rule, h.service)
		ex.SetTrace(tr)
	}
	defer func() {
		ev := ex.Event()
		*ev = observe.RequestEvent{
			Start:          start,
			Duration:       time.Since(start),
			Router:         h.router,
			Service:        h.service,
			Upstream:       ex.Upstream(),
			Retries:        ex.Retries(),
			Method:         r.Method,
			Host:           r.Host,
			Path:           conninfo.RequestTarget(r),
			Proto:          r.Proto,
			ClientAddr:     r.RemoteAddr,
			Status:         ex.Status(),
			BytesOut:       ex.Bytes(),
			TLS:            r.TLS != nil,
			Header:         r.Header,
			ResponseHeader: w.Header(),
			NoAccessLog:    h.noAccessLog,
			NoMetrics:      h.noMetrics,
			Rule:           h.rule,
			LocalPort:      conninfo.LocalPort(r),
			Attempts:       ex.Attempts(),
			OriginStatus:   ex.Origin(),
			Calls:          ex.ServiceCalls(),
		}
		if ci := conninfo.Of(r); ci != nil {
			ev.EntryPoint = ci.EntryPoint
		}
		if r.TLS != nil {
			ev.TLSVersion, ev.TLSCipher = r.TLS.Version, r.TLS.CipherSuite
		}
		if ev.Status == 0 && r.Context().Err() != nil {
			ev.Status = proxy.StatusClientClosedRequest // nothing was sent: the client went away
		}
		if ev.Status == 0 {
			ev.Status = http.StatusOK
		}
		tr.End(ev)
		if h.obs != nil {
			h.obs.Request(ev)
		}
		proxy.PutExchange(ex)
	}()
	h.next.ServeHTTP(ex, r)
}

// qualify returns names with those written without "@" qualified with
// provider, as a name written on the router itself would be (Traefik
// GetQualifiedName: an entrypoint's "hdr" is "hdr@file" for a file router,
// "hdr@docker" for a Docker one; case 060).
func qualify(names []string, provider string) []string {
	if provider == "" {
		return names
	}
	out := make([]string, len(names))
	for i, n := range names {
		if n != "" && !strings.Contains(n, "@") {
			n += "@" + provider
		}
		out[i] = n
	}
	return out
}

// entryPointUnavailable serves a router's requests on an entrypoint whose
// http.middlewares cannot be built for it (a missing or broken
// middleware): 503, never the router without them (an authentication
// middleware must not be skipped).
var entryPointUnavailable = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
})

// noteEntryPointError records that router's entrypoint middlewares on ep
// failed with err (ObjectErrors reports each middleware once).
func (g *Generation) noteEntryPointError(ep, routerName string, err error) {
	oe, ok := errors.AsType[*router.ObjectError](err)
	if !ok {
		oe = &router.ObjectError{Kind: "middleware", Name: "entryPoints." + ep + ".http.middlewares", Err: err}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.epErrs == nil {
		g.epErrs = map[string]*router.ObjectUse{}
	}
	u := g.epErrs[oe.Name]
	if u == nil {
		u = &router.ObjectUse{Err: &router.ObjectError{Kind: oe.Kind, Name: oe.Name,
			Err: fmt.Errorf("%w (named in entryPoints.%s.http.middlewares: its routers answer 503 there until it is fixed)", oe.Err, ep)}}
		g.epErrs[oe.Name] = u
	}
	u.UsedBy = append(u.UsedBy, routerName)
}

// ObjectErrors implements router.Builder: the entrypoint
// middlewares that failed, once each, with the routers they wrap.
func (g *Generation) ObjectErrors() []*router.ObjectUse {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]*router.ObjectUse, 0, len(g.epErrs))
	for _, k := range slices.Sorted(maps.Keys(g.epErrs)) {
		out = append(out, g.epErrs[k])
	}
	return out
}

// epDispatch picks the chain of the entrypoint the request came in on, so
// entryPoints.<ep>.http.middlewares apply only there; requests from other
// entrypoints (or from no Server) use def.
type epDispatch struct {
	byEP map[string]http.Handler
	def  http.Handler
}

func (d *epDispatch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if ci := conninfo.Of(r); ci != nil {
		if h, ok := d.byEP[ci.EntryPoint]; ok {
			h.ServeHTTP(w, r)
			return
		}
	}
	d.def.ServeHTTP(w, r)
}

// WrapInternal implements router.Builder: an internal router (the
// entrypoint redirection) is observed like any other, its requests in
// the metrics of its entrypoint and router and in the access log (no
// service series: it forwards to none).
func (g *Generation) WrapInternal(_ context.Context, name string, r *config.Router, h http.Handler) http.Handler {
	cp := *r
	cp.Service = ""
	if oh := g.observe(name, &cp, h); oh != nil {
		return oh
	}
	return h
}
