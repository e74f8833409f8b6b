package acme

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
)

// Name is the provider name of the Manager's snapshots and problems.
const Name = "acme"

// Order pacing. A failed order is retried after retryCA·2^(n-1) when the
// CA answered (capped at maxRetry, or the CA's Retry-After when it rate
// limits), after retryNet·2^(n-1) when it could not be reached (capped at
// maxRetryNet); at most maxParallel orders run per resolver.
const (
	retryCA      = 30 * time.Second
	retryNet     = 5 * time.Second
	maxRetry     = 6 * time.Hour
	maxRetryNet  = 10 * time.Minute
	maxParallel  = 2
	orderTimeout = 10 * time.Minute
	recheck      = time.Hour
)

// Manager obtains and renews the certificates routers ask their
// certificate resolvers for. See the package documentation.
type Manager struct {
	log       *slog.Logger
	kv        KV
	resolvers map[string]*resolver // immutable after New
	chal      *challenges
	userAgent string
	now       func() time.Time

	wake chan struct{} // capacity 1: state changed, reconcile

	mu       sync.Mutex
	data     map[string]*Data   // resolver -> account and certificates
	held     map[string][]*held // resolver -> parsed certificates of data
	orders   map[string]*order  // domainKey -> order state
	wanted   map[string]*want   // from the last Observe
	wantErrs []providers.Problem
	inflight map[string]int // resolver -> running orders
	loadErrs []providers.Problem
	// skipped holds each resolver whose options are invalid, by name, with
	// the error: it is left out (as Traefik skips it "from the resolvers
	// list") and is a problem for as long as Gantry runs; routers asking
	// for it get the generated default certificate and a problem.
	skipped  map[string]error
	saveMu   sync.Mutex // orders KV writes (taken before mu)
	exportMu sync.Mutex // serializes acme.json writes (resolvers may share one file)

	// saveErrs holds, per resolver, why its data could not be written
	// (a problem until a write succeeds).
	saveErrs map[string]error
	// exportErrs holds, per resolver, why its storage file (the Traefik
	// acme.json kept for a way back) could not be written at the last
	// save; nil once written.
	exportErrs map[string]error

	shared  []sharedKV    // stores shared with other instances (challenge answers)
	lookups chan struct{} // bounds concurrent shared challenge lookups
}

// held is one stored certificate with its parsed leaf.
type held struct {
	cert *Cert
	leaf *x509.Certificate
}

// order is the state of one certificate request (by domainKey).
type order struct {
	resolver  string
	domain    config.Domain
	running   bool
	failures  int
	next      time.Time // earliest next attempt after a failure
	lastErr   string
	lastErrAt time.Time
}

// New checks every resolver of c.CertificatesResolvers (errors name the
// option; an unknown DNS provider lists the available ones) and returns a
// Manager keeping its data in kv. version goes into the User-Agent.
//
// The Manager is always returned. A resolver that fails its checks is
// skipped, as Traefik skips it (cmd/traefik: "The ACME resolver is skipped
// from the resolvers list"), and the error, the join of every skipped
// resolver's, is returned too: `gantry run` logs it and keeps serving (the
// skipped resolvers stay in Problems), `gantry validate` fails on it.
func New(c *static.Configuration, kv KV, log *slog.Logger, version string) (*Manager, error) {
	m := &Manager{
		log: log, kv: kv, resolvers: map[string]*resolver{}, chal: newChallenges(),
		userAgent: "gantry/" + version, now: time.Now, wake: make(chan struct{}, 1),
		data: map[string]*Data{}, held: map[string][]*held{}, orders: map[string]*order{},
		wanted: map[string]*want{}, inflight: map[string]int{}, lookups: make(chan struct{}, maxLookups),
		saveErrs:   map[string]error{},
		exportErrs: map[string]error{},
	}
	var errs []error
	m.skipped = map[string]error{}
	skip := func(name string, err error) {
		m.skipped[name] = err
		errs = append(errs, err)
	}
	shared := map[string]sharedKV{}
	for _, name := range slices.Sorted(maps.Keys(c.CertificatesResolvers)) {
		cr := c.CertificatesResolvers[name]
		if cr == nil || cr.ACME == nil {
			skip(name, fmt.Errorf("certificatesResolvers.%s: only acme resolvers are supported", name))
			continue
		}
		r, err := newResolver(name, cr.ACME, c.EntryPoints, log)
		if err != nil {
			skip(name, err)
			continue
		}
		r.kv = kv
		if st := cr.ACME.Storage; sharedStorage(st) {
			cs := shared[st]
			if cs == nil {
				if cs, err = newSharedStore(st, c); err != nil {
					skip(name, fmt.Errorf("certificatesResolvers.%s.acme.%w", name, err))
					continue
				}
				shared[st] = cs
				m.shared = append(m.shared, cs)
			}
			r.kv = cs
		}
		m.resolvers[name] = r
	}
	return m, errors.Join(errs...)
}

// Name implements providers.Provider.
func (m *Manager) Name() string { return Name }

// Observe tells the Manager the configuration now applied; it derives the
// certificates routers need and wakes Run. It never blocks.
func (m *Manager) Observe(mg *providers.Merged) {
	if mg == nil {
		return
	}
	w, probs := m.wants(mg.Config)
	m.mu.Lock()
	m.wanted, m.wantErrs = w, probs
	m.mu.Unlock()
	m.signal()
}

func (m *Manager) signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// Run implements providers.Provider: it loads the stored accounts and
// certificates (importing storage files on first start), publishes them,
// then orders and renews until ctx is done. It returns nil then, after
// every order in progress has stopped.
func (m *Manager) Run(ctx context.Context, publish func(providers.Snapshot)) error {
	m.loadAll(ctx)
	published := m.snapshot()
	publish(published)
	// After the orders (wg), end the DNS-01 helpers still running.
	defer m.closeDNS()
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, name := range slices.Sorted(maps.Keys(m.resolvers)) {
		r := m.resolvers[name]
		if w, ok := r.kv.(watcher); ok {
			wg.Go(func() {
				w.Watch(ctx, kvBucket, name, func() {
					m.reload(ctx, r)
					m.signal()
				})
			})
		}
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next := m.reconcile(ctx, &wg)
		if s := m.snapshot(); !sameCerts(s, published) {
			published = s
			publish(s)
		}
		timer.Reset(max(next.Sub(m.now()), 10*time.Millisecond))
		select {
		case <-ctx.Done():
			return nil
		case <-m.wake:
		case <-timer.C:
		}
	}
}

// loadAll reads every resolver's data, importing its storage file when
// the store has none.
func (m *Manager) loadAll(ctx context.Context) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loadErrs = nil
	for _, name := range slices.Sorted(maps.Keys(m.resolvers)) {
		r := m.resolvers[name]
		d, err := load(ctx, r.kv, name)
		if err != nil {
			m.loadErrs = append(m.loadErrs, providers.Problem{Provider: Name, Source: "certificatesResolvers." + name, Severity: providers.SeverityError, Message: "read stored account and certificates: " + err.Error()})
			m.log.Error("acme: read stored data", "resolver", name, "error", err)
		}
		if d == nil && err == nil && r.cfg.Storage != "" && !sharedStorage(r.cfg.Storage) {
			imp, warn, ierr := importFile(r.cfg.Storage, name)
			if warn != "" {
				m.log.Warn("acme: "+warn+"; Gantry makes it 0600", "resolver", name)
				if err := os.Chmod(r.cfg.Storage, 0o600); err != nil {
					m.log.Warn("acme: chmod 600", "file", r.cfg.Storage, "error", err)
				}
			}
			switch {
			case ierr != nil:
				m.loadErrs = append(m.loadErrs, providers.Problem{Provider: Name, Source: r.cfg.Storage, Severity: providers.SeverityError, Message: "import Traefik acme.json: " + ierr.Error()})
				m.log.Error("acme: import acme.json", "resolver", name, "file", r.cfg.Storage, "error", ierr)
			case imp != nil:
				if _, serr := save(ctx, r.kv, name, imp); serr != nil {
					m.log.Error("acme: save imported data", "resolver", name, "error", serr)
				}
				m.log.Info("acme: imported Traefik storage", "resolver", name, "file", r.cfg.Storage, "certificates", len(imp.Certificates), "account", imp.Account != nil)
				d = imp
			}
		}
		if d == nil {
			d = &Data{}
		}
		m.data[name] = d
		m.held[name] = parseHeld(d.Certificates, m.log, name)
	}
}

func parseHeld(cs []*Cert, log *slog.Logger, resolver string) []*held {
	var out []*held
	for _, c := range cs {
		b, _ := pem.Decode(c.Certificate)
		if b == nil {
			log.Warn("acme: stored certificate is not PEM; dropped", "resolver", resolver, "domain", c.Domain.Main)
			continue
		}
		leaf, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			log.Warn("acme: stored certificate does not parse; dropped", "resolver", resolver, "domain", c.Domain.Main, "error", err)
			continue
		}
		out = append(out, &held{cert: c, leaf: leaf})
	}
	return out
}

// best returns the held certificate of w's resolver that serves all of w's
// names and is not expired, preferring one ordered for exactly w's domain,
// then the one expiring last.
func (m *Manager) best(w *want, now time.Time) *held {
	var found *held
	for _, h := range m.held[w.resolver] {
		if !now.Before(h.leaf.NotAfter) {
			continue
		}
		ok := true
		for _, n := range domainNames(w.domain) {
			if !covers(leafNames(h.leaf), n) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		if domainKey(w.resolver, h.cert.Domain) == w.key() {
			return h
		}
		if found == nil || h.leaf.NotAfter.After(found.leaf.NotAfter) {
			found = h
		}
	}
	return found
}

func leafNames(c *x509.Certificate) []string {
	names := make([]string, 0, len(c.DNSNames)+1)
	for _, n := range c.DNSNames {
		names = append(names, strings.ToLower(n))
	}
	if len(names) == 0 && c.Subject.CommonName != "" {
		names = append(names, strings.ToLower(c.Subject.CommonName))
	}
	return names
}

// reconcile starts the orders that are due and returns when it should run
// again at the latest.
func (m *Manager) reconcile(ctx context.Context, wg *sync.WaitGroup) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	next := now.Add(recheck)
	for _, k := range slices.Sorted(maps.Keys(m.wanted)) {
		w := m.wanted[k]
		r := m.resolvers[w.resolver]
		d := w.domain
		if h := m.best(w, now); h != nil {
			at := r.renewAt(h.leaf)
			if now.Before(at) {
				next = minTime(next, at)
				continue
			}
			d = h.cert.Domain // renew the certificate in use
		}
		key := domainKey(w.resolver, d)
		o := m.orders[key]
		if o == nil {
			o = &order{resolver: w.resolver, domain: d}
			m.orders[key] = o
		}
		if o.running {
			continue
		}
		if now.Before(o.next) {
			next = minTime(next, o.next)
			continue
		}
		if m.inflight[w.resolver] >= maxParallel {
			continue // woken when one finishes
		}
		o.running = true
		m.inflight[w.resolver]++
		acct := m.data[w.resolver].Account
		wg.Go(func() { m.run(ctx, r, o, acct) })
	}
	return next
}

// persist merges the resolver's data into its KV and takes the merged
// result (other instances' certificates included) as the local state.
func (m *Manager) persist(ctx context.Context, r *resolver) {
	m.saveMu.Lock()
	defer m.saveMu.Unlock()
	m.mu.Lock()
	d := &Data{Account: m.data[r.name].Account, Certificates: slices.Clone(m.data[r.name].Certificates)}
	m.mu.Unlock()
	out, err := save(context.WithoutCancel(ctx), r.kv, r.name, d)
	m.mu.Lock()
	m.saveErrs[r.name] = err
	m.mu.Unlock()
	if err != nil {
		m.log.Error("acme: save account and certificates", "resolver", r.name, "error", err)
		return
	}
	if st := r.cfg.Storage; st != "" && !sharedStorage(st) {
		m.exportMu.Lock()
		err := exportFile(st, r.name, out)
		m.exportMu.Unlock()
		m.mu.Lock()
		prev := m.exportErrs[r.name]
		m.exportErrs[r.name] = err
		m.mu.Unlock()
		// Logged when it starts, changes or ends (it stays a problem in
		// /api/problems meanwhile), not once per certificate saved.
		switch {
		case err != nil && (prev == nil || prev.Error() != err.Error()):
			m.log.Warn("acme: update the Traefik storage file", "resolver", r.name, "file", st, "error", err)
		case err == nil && prev != nil:
			m.log.Info("acme: the Traefik storage file is written again", "resolver", r.name, "file", st)
		}
	}
	m.mu.Lock()
	m.data[r.name] = out
	m.held[r.name] = parseHeld(out.Certificates, m.log, r.name)
	m.mu.Unlock()
}

// reload takes the resolver's data from its KV (written by another
// instance sharing it). A successful read ends the problem of a failed
// read at start.
func (m *Manager) reload(ctx context.Context, r *resolver) {
	d, err := load(ctx, r.kv, r.name)
	if err != nil {
		m.log.Warn("acme: reload shared data", "resolver", r.name, "error", err)
		return
	}
	m.mu.Lock()
	m.loadErrs = slices.DeleteFunc(m.loadErrs, func(p providers.Problem) bool { return p.Source == "certificatesResolvers."+r.name })
	if d == nil {
		m.mu.Unlock()
		return
	}
	if d.Account == nil {
		d.Account = m.data[r.name].Account
	}
	m.data[r.name] = d
	m.held[r.name] = parseHeld(d.Certificates, m.log, r.name)
	m.mu.Unlock()
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// snapshot is the provider snapshot: every unexpired certificate, each in
// the default store, sorted by resolver and main domain.
func (m *Manager) snapshot() providers.Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	c := config.New()
	for _, name := range slices.Sorted(maps.Keys(m.held)) {
		hs := slices.Clone(m.held[name])
		slices.SortFunc(hs, func(a, b *held) int {
			return strings.Compare(domainKey(name, a.cert.Domain), domainKey(name, b.cert.Domain))
		})
		for _, h := range hs {
			if !now.Before(h.leaf.NotAfter) {
				continue
			}
			if c.TLS == nil {
				c.TLS = &config.TLSConfiguration{}
			}
			c.TLS.Certificates = append(c.TLS.Certificates, &config.CertAndStores{
				Certificate: config.Certificate{CertFile: string(h.cert.Certificate), KeyFile: string(h.cert.Key)},
				Stores:      []string{providers.DefaultTLSName},
			})
		}
	}
	return providers.Snapshot{Config: c, Problems: slices.Clone(m.loadErrs)}
}

func sameCerts(a, b providers.Snapshot) bool {
	va, _ := providers.Hash(a.Config)
	vb, _ := providers.Hash(b.Config)
	return va == vb && len(a.Problems) == len(b.Problems)
}
