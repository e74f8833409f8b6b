package dashboard

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"net/http/pprof"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/internal/workgroup"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/kubernetes/ingressnginx"
)

// Options configures the API. Tables is required; every other source is
// optional and the endpoints that need a missing one answer 503 (or omit
// that part).
type Options struct {
	// Log receives the API's own errors; nil discards them.
	Log *slog.Logger
	// Static is the static configuration: entrypoints for /api/entrypoints,
	// providers and features for /api/overview, api.* for security.
	Static  *static.Configuration
	Tables  Tables
	Health  Health
	Sources Sources
	History History
	// Backends gives the state of the backends Gantry depends on besides
	// providers (each Redis of rateLimit.redis, "redis <endpoints>"; the
	// Consul registration, "cluster registration"), keyed by name:
	// /api/providers lists them beside the providers, and one "down" is a
	// problem in /api/problems; nil: none.
	Backends func() map[string]providers.SourceState
	// Certificates lists the ACME resolvers' certificates
	// (/api/tls/certificates) and adds their failed orders to
	// /api/problems; nil means no resolvers.
	Certificates Certificates
	// Cluster lists the instances registered in Consul (/api/cluster);
	// nil: the endpoint answers 404 (no cluster section).
	Cluster Cluster
	// DynamicEntryPoints returns the dynamic entrypoints open (asked for by
	// providers, dataplane/entrypoints), listed by /api/entrypoints with
	// "dynamic": true; nil: none.
	DynamicEntryPoints func() map[string]*static.EntryPoint
	// Migration returns the ingress-nginx migration report of
	// providers.kubernetesIngressNGINX (nil until it has read the cluster)
	// for /api/kubernetes/ingress-nginx/migration; nil: that endpoint
	// answers 404.
	Migration func() *ingressnginx.Report
	// StaticReloads reports the static configuration's revision and live
	// reloads (/api/static); nil: the endpoint answers 404.
	StaticReloads func() static.ReloadStatus
	// Sampler is the live rates and chart history, owned and run by the
	// caller (NewSampler, Run), so they outlive this API; it sets the
	// stats' interval. Without it, Live (when set) is sampled by the API
	// itself for its lifetime.
	Sampler *Sampler
	// Live feeds per-router rates to the WebSocket when Sampler is nil
	// (nil too: no stats messages).
	Live *observe.Live
	// UI is the dashboard's files (web.FS()); nil serves no UI.
	UI fs.FS
	// Version and StartDate are reported by /api/version.
	Version   string
	StartDate time.Time
	// StatsInterval is how often live rates are sampled (the charts'
	// resolution) and pushed to WebSocket clients; default 1s.
	StatsInterval time.Duration
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// API serves the API, the WebSocket feed and the UI. Create it with New.
type API struct {
	opts    Options
	log     *slog.Logger
	tables  Tables
	health  Health
	sampler *Sampler // nil without Options.Sampler or Live
	sec     *security
	handler http.Handler

	// work holds the sampler's goroutine and the WebSocket loops; its
	// context is theirs.
	work *workgroup.Group

	cvMu    sync.Mutex // guards the content version cache (cluster.go)
	cvTable Table
	cv      string
}

// New builds the API. It returns an error naming the option when the
// security settings are invalid (an unreadable api.usersFile, a user line
// that is not "name:hash", an unsupported hash).
func New(opts Options) (*API, error) {
	if opts.Tables == nil {
		return nil, errors.New("dashboard: Options.Tables is required")
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Sampler != nil {
		opts.StatsInterval = opts.Sampler.interval
	}
	if opts.StatsInterval <= 0 {
		opts.StatsInterval = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	var apiConf *static.API
	listen := ""
	if opts.Static != nil {
		apiConf = opts.Static.API
		if ep := opts.Static.EntryPoints[apiEntryPoint]; ep != nil {
			listen = ep.Address
		}
	}
	sec, err := newSecurity(apiConf, listen, opts.Tables)
	if err != nil {
		return nil, err
	}
	if w := sec.exposureWarning(listen); w != "" {
		opts.Log.Warn(w)
	}
	a := &API{opts: opts, log: opts.Log, tables: opts.Tables, health: opts.Health, sec: sec}
	a.work = workgroup.New()
	switch {
	case opts.Sampler != nil:
		a.sampler = opts.Sampler
	case opts.Live != nil:
		a.sampler = NewSampler(opts.Live, opts.StatsInterval, opts.Now)
		a.work.Go(func() { a.sampler.Run(a.work.Context().Done(), opts.Tables) })
	}
	a.handler = a.routes()
	return a, nil
}

// Handler returns the API's handler: what api@internal serves. It applies,
// outermost first: the Host check, basic auth (when users are configured),
// and Go's cross-origin protection for state-changing requests. Paths are
// under api.basePath (default "/").
func (a *API) Handler() http.Handler { return a.handler }

// Close ends every open WebSocket connection and waits for their loops to
// return; a WebSocket request after is refused. Safe to call more than
// once.
func (a *API) Close() { a.work.Close() }

func (a *API) routes() http.Handler {
	mux := http.NewServeMux()
	get := func(p string, h http.HandlerFunc) { mux.HandleFunc("GET "+p, h) }
	get("/api/overview", a.getOverview)
	get("/api/rawdata", a.getRawData)
	get("/api/version", a.getVersion)
	get("/api/entrypoints", a.getEntryPoints)
	get("/api/entrypoints/{name}", a.getEntryPoint)
	get("/api/http/routers", a.getRouters)
	get("/api/http/routers/{name}", a.getRouter)
	get("/api/http/services", a.getServices)
	get("/api/http/services/{name}", a.getService)
	get("/api/http/middlewares", a.getMiddlewares)
	get("/api/http/middlewares/{name}", a.getMiddleware)
	a.tcpRoutes(get)
	get("/api/providers", a.getProviders)
	get("/api/problems", a.getProblems)
	get("/api/cluster", a.getCluster)
	get("/api/kubernetes/ingress-nginx/migration", a.getMigration)
	get("/api/static", a.getStatic)
	get("/api/tls/certificates", a.getCertificates)
	get("/api/tls/options", a.getTLSOptions)
	get("/api/revisions", a.getRevisions)
	get("/api/revisions/{version}", a.getRevision)
	get("/api/revisions/{a}/diff/{b}", a.getDiff)
	mux.HandleFunc("POST /api/simulate", a.postSimulate)
	get("/api/series", a.getSeries)
	get("/api/ws", a.serveWS)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not found: "+r.Method+" "+r.URL.Path)
	})
	if a.opts.UI != nil {
		ui := http.StripPrefix("/dashboard/", http.FileServerFS(a.opts.UI))
		mux.Handle("GET /dashboard/", uiHeaders(ui))
		mux.Handle("GET /dashboard", http.RedirectHandler("dashboard/", http.StatusFound))
		mux.Handle("GET /{$}", http.RedirectHandler("dashboard/", http.StatusFound))
	}
	if a.opts.Static != nil && a.opts.Static.API != nil && a.opts.Static.API.Debug {
		// api.debug, as in Traefik: Go's profiler and expvar.
		// Source: https://doc.traefik.io/traefik/operations/api/#debug
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", redactedCmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
		mux.HandleFunc("GET /debug/vars", redactedVars)
	}
	var h http.Handler = mux
	h = a.sec.wrap(h)
	if bp := a.basePath(); bp != "" {
		h = http.StripPrefix(bp, h)
	}
	return h
}

func (a *API) basePath() string {
	if a.opts.Static == nil || a.opts.Static.API == nil {
		return ""
	}
	return strings.TrimRight(a.opts.Static.API.BasePath, "/")
}

// uiHeaders sets a strict Content-Security-Policy on the UI: everything
// from this origin only (the UI works offline, no CDN).
func uiHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}

func (a *API) getOverview(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, a.overview(a.view()))
}

// rawData is Traefik's RunTimeRepresentation for HTTP.
type rawData struct {
	Routers     map[string]routerItem     `json:"routers,omitempty"`
	Middlewares map[string]middlewareItem `json:"middlewares,omitempty"`
	Services    map[string]serviceItem    `json:"services,omitempty"`
}

func (a *API) getRawData(w http.ResponseWriter, r *http.Request) {
	v := a.view()
	h := v.http()
	out := rawData{Routers: map[string]routerItem{}, Middlewares: map[string]middlewareItem{}, Services: map[string]serviceItem{}}
	for n := range h.Routers {
		out.Routers[n], _ = v.router(n, false)
	}
	for _, n := range v.serviceNames() {
		it, _ := v.service(n, false)
		it.ServerDetails = nil
		out.Services[n] = it
	}
	for n := range h.Middlewares {
		out.Middlewares[n], _ = v.middleware(n, false)
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *API) getVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, struct {
		Version   string    `json:"Version"`
		Codename  string    `json:"Codename"`
		StartDate time.Time `json:"startDate"`
	}{a.opts.Version, "gantry", a.opts.StartDate})
}

type entryPointItem struct {
	*static.EntryPoint
	Name string `json:"name"`
	// Dynamic marks an entrypoint a provider asked for (Gantry).
	Dynamic bool `json:"dynamic,omitempty"`
	// RequestedBy are the requests for a dynamic entrypoint in the running
	// configuration, by provider (a listener still draining has none).
	RequestedBy []entryPointRequest `json:"requestedBy,omitempty"`
}

// entryPointRequest is one provider's ask for a dynamic entrypoint: the
// provider ("docker") and where (its label or tag, "container redis label
// gantry.entrypoints.redis.address", or the file and line).
type entryPointRequest struct {
	Provider string `json:"provider"`
	Source   string `json:"source,omitempty"`
}

// requestsFor returns the requests in m for the dynamic entrypoint name
// (qualified in m: "name@provider"), sorted by provider.
func requestsFor(m *providers.Merged, name string) []entryPointRequest {
	if m == nil || m.Config == nil {
		return nil
	}
	var out []entryPointRequest
	for _, q := range sortedNames(m.Config.EntryPoints) {
		prov := providers.ProviderOf(q)
		if prov == "" || q[:len(q)-len(prov)-1] != name {
			continue
		}
		out = append(out, entryPointRequest{Provider: prov, Source: m.Origins["entrypoint "+q]})
	}
	return out
}

// entryPointItemOf is the API's item for entrypoint name.
func entryPointItemOf(m *providers.Merged, name string, ep *static.EntryPoint, dynamic bool) entryPointItem {
	it := entryPointItem{EntryPoint: ep, Name: name, Dynamic: dynamic}
	if dynamic {
		it.RequestedBy = requestsFor(m, name)
	}
	return it
}

// entryPoints returns the static entrypoints and the dynamic ones open
// (a static name wins), and which are dynamic.
func (a *API) entryPoints() (map[string]*static.EntryPoint, map[string]bool) {
	if a.opts.Static == nil && a.opts.DynamicEntryPoints == nil {
		return nil, nil
	}
	out := map[string]*static.EntryPoint{}
	if a.opts.Static != nil {
		maps.Copy(out, a.opts.Static.EntryPoints)
	}
	dyn := map[string]bool{}
	if a.opts.DynamicEntryPoints != nil {
		for n, ep := range a.opts.DynamicEntryPoints() {
			if _, ok := out[n]; !ok {
				out[n], dyn[n] = ep, true
			}
		}
	}
	return out, dyn
}

func (a *API) getEntryPoints(w http.ResponseWriter, r *http.Request) {
	eps, dyn := a.entryPoints()
	m := a.tables.Current().Merged()
	items := make([]entryPointItem, 0, len(eps))
	for _, n := range sortedNames(eps) {
		items = append(items, entryPointItemOf(m, n, eps[n], dyn[n]))
	}
	page, err := paginate(w, r, items)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, page)
}

func (a *API) getEntryPoint(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	eps, dyn := a.entryPoints()
	ep, ok := eps[name]
	if !ok {
		writeError(w, http.StatusNotFound, "entry point not found: "+name)
		return
	}
	writeJSON(w, http.StatusOK, entryPointItemOf(a.tables.Current().Merged(), name, ep, dyn[name]))
}

func (a *API) getRouters(w http.ResponseWriter, r *http.Request) {
	v, c := a.view(), newCriterion(r)
	items := []routerItem{}
	for _, n := range sortedNames(v.http().Routers) {
		if it, _ := v.router(n, true); c.keepRouter(it) {
			items = append(items, it)
		}
	}
	sortItems(r, items, func(it routerItem) []string {
		return []string{it.Name, it.Conf.Rule, it.Conf.Service, it.Status, it.Provider, fmt.Sprintf("%020d", v.priority(it.Name))}
	})
	listResponse(w, r, items)
}

func (a *API) getRouter(w http.ResponseWriter, r *http.Request) {
	getOne(w, r, "router", a.view().router)
}

// getOne answers one object by the {name} path value, or 404 naming it.
func getOne[T any](w http.ResponseWriter, r *http.Request, kind string, lookup func(name string, full bool) (T, bool)) {
	name := r.PathValue("name")
	it, ok := lookup(name, true)
	if !ok {
		writeError(w, http.StatusNotFound, kind+" not found: "+name)
		return
	}
	writeJSON(w, http.StatusOK, it)
}

func (a *API) getServices(w http.ResponseWriter, r *http.Request) {
	v := a.view()
	items := list(v.serviceNames(), newCriterion(r), v.service, func(serviceItem) []string { return nil })
	sortItems(r, items, func(it serviceItem) []string { return []string{it.Name, it.Type, it.Status, it.Provider} })
	listResponse(w, r, items)
}

func (a *API) getService(w http.ResponseWriter, r *http.Request) {
	getOne(w, r, "service", a.view().service)
}

func (a *API) getMiddlewares(w http.ResponseWriter, r *http.Request) {
	v := a.view()
	items := list(sortedNames(v.http().Middlewares), newCriterion(r), v.middleware, func(middlewareItem) []string { return nil })
	sortItems(r, items, func(it middlewareItem) []string { return []string{it.Name, it.Type, it.Status, it.Provider} })
	listResponse(w, r, items)
}

func (a *API) getMiddleware(w http.ResponseWriter, r *http.Request) {
	getOne(w, r, "middleware", a.view().middleware)
}

func listResponse[T any](w http.ResponseWriter, r *http.Request, items []T) {
	page, err := paginate(w, r, items)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// sortItems orders items by the sortBy query parameter (name, rule,
// service, status, provider, type; default name) and direction
// (asc|desc), as Traefik's API does. keys returns, in that order, the
// sortable fields the item kind has: name first, then kind-specific ones.
func sortItems[T any](r *http.Request, items []T, keys func(T) []string) {
	q := r.URL.Query()
	by := q.Get("sortBy")
	desc := strings.EqualFold(q.Get("direction"), "desc")
	idx := 0
	if by != "" {
		names := map[string][]string{
			"router":     {"name", "rule", "service", "status", "provider", "priority"},
			"service":    {"name", "type", "status", "provider"},
			"middleware": {"name", "type", "status", "provider"},
		}
		var kind []string
		switch any(*new(T)).(type) {
		case routerItem:
			kind = names["router"]
		case serviceItem:
			kind = names["service"]
		default:
			kind = names["middleware"]
		}
		for i, k := range kind {
			if k == by {
				idx = i
			}
		}
	}
	sort.SliceStable(items, func(i, j int) bool {
		ki, kj := keys(items[i]), keys(items[j])
		if ki[idx] == kj[idx] {
			return ki[0] < kj[0]
		}
		if desc {
			return ki[idx] > kj[idx]
		}
		return ki[idx] < kj[idx]
	})
}
