package consul

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/gantry-proxy/gantry/config/label"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
)

// DefaultRefreshInterval is the polling period when watch is false
// (Traefik's default refreshInterval).
const DefaultRefreshInterval = 15 * time.Second

// MaxBlockingQueries and MaxQuickQueries bound the catalog provider's
// requests in flight: blocking queries (one per watched service) and other
// requests (first reads, retries, polls). With the service list's own
// query, the total stays under the 200 concurrent connections a Consul agent
// accepts per client address by default (limits.http_max_conns_per_client).
// With more services than MaxBlockingQueries, services take turns, and a
// change may wait up to about endpointWaitTime per extra round.
const (
	MaxBlockingQueries = 150
	MaxQuickQueries    = 20
)

// Catalog is the Consul Catalog provider (providers.consulCatalog). It
// implements providers.Provider; create it with NewCatalog.
type Catalog struct {
	client *api.Client
	log    *slog.Logger
	b      *builder
	spec   watchSpec
}

// NewCatalog checks opts and returns a catalog provider. Defaults follow
// Traefik v3 (https://doc.traefik.io/traefik/providers/consul-catalog/):
// prefix "traefik" (Gantry also always reads "gantry"), exposedByDefault
// true, defaultRule Host(`{{ normalize .Name }}`), strictChecks passing and
// warning, endpoint 127.0.0.1:8500; Gantry's watch default is true (blocking
// queries), and endpointWaitTime defaults to 30 s. It returns an error for a
// bad constraints expression, defaultRule template, strictChecks value or
// endpoint, and for options Gantry does not support (connectAware,
// connectByDefault, namespaces: Consul Connect and Enterprise namespaces).
// log must not be nil.
func NewCatalog(opts static.ConsulCatalog, log *slog.Logger) (*Catalog, error) {
	if opts.ConnectAware || opts.ConnectByDefault {
		return nil, errors.New("consulcatalog: connectAware and connectByDefault are not supported by gantry")
	}
	if len(opts.Namespaces) > 0 {
		return nil, errors.New("consulcatalog: namespaces (Consul Enterprise) are not supported by gantry")
	}
	if opts.Stale && opts.RequireConsistent {
		return nil, errors.New("consulcatalog: stale and requireConsistent are mutually exclusive")
	}
	client, wait, err := newClient(opts.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("consulcatalog: %w", err)
	}
	b := &builder{exposedByDefault: opts.ExposedByDefault == nil || *opts.ExposedByDefault}
	prefix := strings.TrimSuffix(opts.Prefix, ".")
	if prefix == "" {
		prefix = "traefik"
	}
	b.prefixes = []string{prefix}
	if !strings.EqualFold(prefix, "gantry") {
		b.prefixes = append(b.prefixes, "gantry")
	}
	if b.constraint, err = parseConstraint(opts.Constraints); err != nil {
		return nil, fmt.Errorf("consulcatalog: %w", err)
	}
	rule := opts.DefaultRule
	if rule == "" {
		rule = DefaultRule
	}
	if b.defaultRule, err = parseRuleTemplate(rule); err != nil {
		return nil, fmt.Errorf("consulcatalog: %w", err)
	}
	b.allowed = []string{api.HealthPassing, api.HealthWarning}
	if len(opts.StrictChecks) > 0 {
		b.allowed = nil
		for _, s := range opts.StrictChecks {
			s = strings.ToLower(strings.TrimSpace(s))
			if !slices.Contains([]string{api.HealthPassing, api.HealthWarning, api.HealthCritical, api.HealthMaint}, s) {
				return nil, fmt.Errorf("consulcatalog: strictChecks %q: want passing, warning, critical or maintenance", s)
			}
			b.allowed = append(b.allowed, s)
		}
	}
	spec := watchSpec{
		base:  api.QueryOptions{AllowStale: opts.Stale, RequireConsistent: opts.RequireConsistent, UseCache: opts.Cache},
		wait:  wait,
		slots: make(chan struct{}, MaxBlockingQueries),
		quick: make(chan struct{}, MaxQuickQueries),
	}
	if opts.Watch != nil && !*opts.Watch {
		spec.poll = DefaultRefreshInterval
		if opts.RefreshInterval > 0 {
			spec.poll = opts.RefreshInterval.D()
		}
	}
	return &Catalog{client: client, log: log.With("provider", CatalogName), b: b, spec: spec}, nil
}

// Name returns "consulcatalog".
func (c *Catalog) Name() string { return CatalogName }

// event is what the watchers send to Run's loop.
type event struct {
	list    map[string][]string // service names and the union of their tags
	svc     *serviceWatch       // set for a service's health result or error
	entries []*api.ServiceEntry
	err     error
}

// serviceWatch is the state of one watched service, owned by Run's loop.
type serviceWatch struct {
	name    string
	cancel  context.CancelFunc
	entries []*api.ServiceEntry
	gen     int  // incremented with each new entries
	done    bool // a first result or error has arrived
	// part is built from entries of generation partGen; it is reused
	// until the service changes.
	part    *servicePart
	partGen int
}

// Run watches the catalog until ctx is done and publishes a complete
// snapshot after each change of the resulting configuration or problems
// (not after every index change): one blocking query on the service list, and
// one per service on /v1/health/service/<name> (all instances with their
// service and node checks). The first snapshot is published once every
// listed service has answered. Errors are logged and retried with backoff;
// the first one publishes a Down snapshot (a problem, state "down"), and
// the last snapshot stays in effect until Consul answers again (case 019). Run returns nil when ctx is done, after joining every
// goroutine it started.
func (c *Catalog) Run(ctx context.Context, publish func(providers.Snapshot)) error {
	ctx, cancel := context.WithCancel(ctx)
	r := &catalogRun{c: c, ctx: ctx, events: make(chan event), watches: map[string]*serviceWatch{}}
	defer r.wg.Wait()
	defer cancel()
	list := c.spec
	list.slots, list.quick = nil, nil // the service list never waits behind the services
	r.wg.Go(func() {
		watch(ctx, list, c.fetchList,
			func(l map[string][]string) { r.send(ctx, event{list: l}) },
			func(err error) { r.send(ctx, event{err: fmt.Errorf("list services: %w", err)}) })
	})
	var last []byte // canonical form of the last published snapshot
	for {
		var ev event
		select {
		case <-ctx.Done():
			return nil
		case ev = <-r.events:
		}
		wasFailing := r.failing
		changed := r.handle(ev)
		// Take whatever else is already waiting, so that a burst of
		// changes costs one build.
		for more := true; more; {
			select {
			case ev = <-r.events:
				changed = r.handle(ev) || changed
			default:
				more = false
			}
		}
		if r.failing && !wasFailing {
			// Down: say so (state "down", a problem) and keep the last
			// configuration; the first answer after it publishes again.
			last = nil
			publish(providers.DownSnapshot(CatalogName, "consul catalog", r.lastErr))
		}
		// While failing, nothing else: the first answer after the
		// outage re-reads everything (index 0) and publishes.
		if r.failing || !changed || !r.listed || !r.allDone() {
			continue
		}
		// Check outputs and unrelated instances change Consul's index
		// without changing the configuration: publish only real changes.
		snap := r.snapshot()
		if sig := canonical(snap); !bytes.Equal(sig, last) {
			last = sig
			publish(snap)
		}
	}
}

// catalogRun is the state of one Run, owned by Run's goroutine; the
// watchers only send events.
type catalogRun struct {
	c       *Catalog
	ctx     context.Context
	wg      sync.WaitGroup
	events  chan event
	watches map[string]*serviceWatch
	listed  bool  // the service list has answered once
	failing bool  // the last request failed
	lastErr error // its error
}

// send delivers ev unless ctx (the sender's) is done.
func (r *catalogRun) send(ctx context.Context, ev event) {
	select {
	case r.events <- ev:
	case <-ctx.Done():
	}
}

// handle applies one event and reports whether it carried data.
func (r *catalogRun) handle(ev event) bool {
	if ev.svc != nil && r.watches[ev.svc.name] != ev.svc {
		return false // from a watch already stopped
	}
	if ev.err != nil {
		if !r.failing {
			r.c.log.Warn("consul request failed; keeping the last configuration", "err", ev.err)
		} else {
			r.c.log.Debug("consul request failed", "err", ev.err)
		}
		r.failing, r.lastErr = true, ev.err
		if ev.svc != nil {
			ev.svc.done = true
		}
		return false
	}
	if r.failing {
		r.c.log.Info("consul reachable again")
		r.failing = false
	}
	if ev.svc != nil {
		ev.svc.entries, ev.svc.done = ev.entries, true
		ev.svc.gen++
		return true
	}
	r.listed = true
	r.sync(ev.list)
	return true
}

// sync starts a watch for each newly listed service that could be exposed
// and stops the watches of services no longer listed.
func (r *catalogRun) sync(list map[string][]string) {
	for name, w := range r.watches {
		if tags, ok := list[name]; !ok || !r.c.mayExpose(tags) {
			w.cancel()
			delete(r.watches, name)
		}
	}
	for name, tags := range list {
		if r.watches[name] != nil || !r.c.mayExpose(tags) {
			continue
		}
		wctx, cancel := context.WithCancel(r.ctx)
		w := &serviceWatch{name: name, cancel: cancel}
		r.watches[name] = w
		r.wg.Go(func() {
			watch(wctx, r.c.spec,
				func(q *api.QueryOptions) ([]*api.ServiceEntry, *api.QueryMeta, error) {
					return r.c.client.Health().Service(name, "", false, q)
				},
				func(es []*api.ServiceEntry) { r.send(wctx, event{svc: w, entries: es}) },
				func(err error) { r.send(wctx, event{svc: w, err: fmt.Errorf("service %s health: %w", name, err)}) })
		})
	}
}

func (r *catalogRun) allDone() bool {
	for _, w := range r.watches {
		if !w.done {
			return false
		}
	}
	return true
}

// snapshot builds from the latest entries of every watched service,
// decoding again only the services that changed since the last snapshot.
func (r *catalogRun) snapshot() providers.Snapshot {
	parts := make([]*servicePart, 0, len(r.watches))
	for _, name := range slices.Sorted(maps.Keys(r.watches)) {
		w := r.watches[name]
		if w.part == nil || w.partGen != w.gen {
			w.part, w.partGen = r.c.b.buildService(name, w.entries), w.gen
		}
		parts = append(parts, w.part)
	}
	return assemble(parts)
}

// mayExpose reports whether any instance of a service with these tags (the
// union over its instances) could be routed: with exposedByDefault false,
// some instance must carry <prefix>.enable=true. Services that cannot be
// routed are not watched.
func (c *Catalog) mayExpose(tags []string) bool {
	if c.b.exposedByDefault {
		return true
	}
	for _, t := range tags {
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			continue
		}
		if en, ok := label.ProviderKeys(map[string]string{strings.TrimSpace(k): v}, c.b.prefixes...)["enable"]; ok {
			if b, err := strconv.ParseBool(en); err != nil || b {
				return true // a bad value is reported by build
			}
		}
	}
	return false
}

func (c *Catalog) fetchList(q *api.QueryOptions) (map[string][]string, *api.QueryMeta, error) {
	return c.client.Catalog().Services(q)
}
