package docker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"regexp"
	"strings"
	"text/template"
	"time"

	"github.com/Masterminds/sprig/v3"

	"github.com/gantry-proxy/gantry/config/label"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/docker/engineapi"
)

const providerName = "docker"

// Defaults of the Docker provider options (Traefik's).
const (
	DefaultEndpoint = "unix:///var/run/docker.sock"
	// DefaultRule is the rule of routers without a rule label: a text/template
	// with sprig functions and normalize, over .Name, .ContainerName and .Labels.
	DefaultRule = "Host(`{{ normalize .Name }}`)"
)

// DefaultPrefixes are the label prefixes read when static.Docker.Prefixes is
// empty: Gantry's own, then Traefik's.
var DefaultPrefixes = []string{"gantry", "traefik"}

// dockerAPI is the part of the Docker client (*engine.Client) the provider
// uses: reads only.
type dockerAPI interface {
	Ping(ctx context.Context) (engineapi.Ping, error)
	ContainerList(ctx context.Context) ([]engineapi.Summary, error)
	ContainerInspect(ctx context.Context, id string) (engineapi.Container, error)
	Events(ctx context.Context, types ...string) (<-chan engineapi.Event, <-chan error)
	Close() error
}

// Provider watches a Docker engine. Create it with New.
type Provider struct {
	log       *slog.Logger
	endpoint  string
	watch     bool
	base      settings
	newClient func() (dockerAPI, error)
	// endpoints are providers.docker.endpoints (multi.go); when set,
	// endpoint and newClient are unused.
	endpoints []*engine
}

// New checks opts and returns a Provider; it does not connect (Run does).
// Zero options take Traefik's defaults: endpoint unix:///var/run/docker.sock,
// exposedByDefault true, watch true, defaultRule Host(`{{ normalize .Name }}`),
// prefixes gantry and traefik. It returns an error naming the option when the
// default rule template or the constraints expression does not parse, or
// when the TLS files cannot be read.
// Source: https://doc.traefik.io/traefik/providers/docker/
func New(opts static.Docker, log *slog.Logger) (*Provider, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := settings{
		prefixes:           opts.Prefixes,
		exposedByDefault:   opts.ExposedByDefault == nil || *opts.ExposedByDefault,
		network:            opts.Network,
		allowEmptyServices: opts.AllowEmptyServices,
		useBindPortIP:      opts.UseBindPortIP,
	}
	if len(s.prefixes) == 0 {
		s.prefixes = DefaultPrefixes
	}
	for _, p := range s.prefixes {
		if p == "" || strings.HasSuffix(p, ".") {
			return nil, fmt.Errorf("docker: prefixes: %q: want a prefix without the trailing dot, such as \"gantry\"", p)
		}
	}
	rule := opts.DefaultRule
	if rule == "" {
		rule = DefaultRule
	}
	tpl, err := template.New("defaultRule").Funcs(sprig.TxtFuncMap()).Funcs(template.FuncMap{"normalize": providers.Normalize}).Parse(rule)
	if err != nil {
		return nil, fmt.Errorf("docker: defaultRule: %w", err)
	}
	s.defaultRule = tpl
	if s.constraints, err = parseConstraints(opts.Constraints); err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	endpoint := opts.Endpoint
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	co, err := clientOptions(opts, endpoint)
	if err != nil {
		return nil, err
	}
	p := &Provider{
		log:      log.With("provider", providerName),
		endpoint: endpoint,
		watch:    opts.Watch == nil || *opts.Watch,
		base:     s,
	}
	p.newClient = func() (dockerAPI, error) { return engineapi.New(co) }
	if len(opts.Endpoints) > 0 {
		if opts.Endpoint != "" {
			return nil, fmt.Errorf("docker: set endpoint or endpoints, not both")
		}
		if p.endpoints, err = newEngines(opts); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// clientOptions are the engine client's options for endpoint: headers
// (User-Agent, basic auth), TLS and the timeout. Errors name the endpoint
// (not unix://, tcp://, http:// or https://) or the TLS option.
func clientOptions(opts static.Docker, endpoint string) (engineapi.Options, error) {
	co := engineapi.Options{Endpoint: endpoint, Headers: map[string]string{"User-Agent": "Gantry"}, Timeout: opts.HTTPClientTimeout.D()}
	if opts.Username != "" || opts.Password != "" {
		co.Headers["Authorization"] = "Basic " + base64.StdEncoding.EncodeToString([]byte(opts.Username+":"+opts.Password))
	}
	if _, err := engineapi.ParseEndpoint(endpoint); err != nil {
		return co, fmt.Errorf("docker: endpoint: %w", err)
	}
	if opts.TLS != nil {
		tc, err := tlsConfig(opts)
		if err != nil {
			return co, err
		}
		co.TLS = tc
	}
	return co, nil
}

// tlsConfig builds the client TLS configuration; CA, Cert and Key are file
// paths or inline PEM.
func tlsConfig(opts static.Docker) (*tls.Config, error) {
	t := opts.TLS
	tc := &tls.Config{InsecureSkipVerify: t.InsecureSkipVerify} //nolint:gosec // an explicit option, as in Traefik
	read := func(what, v string) ([]byte, error) {
		if strings.HasPrefix(strings.TrimSpace(v), "-----BEGIN") {
			return []byte(v), nil
		}
		b, err := os.ReadFile(v)
		if err != nil {
			return nil, fmt.Errorf("docker: tls.%s: %w", what, err)
		}
		return b, nil
	}
	if t.CA != "" {
		pem, err := read("ca", t.CA)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("docker: tls.ca: no certificate found")
		}
		tc.RootCAs = pool
	}
	if t.Cert != "" || t.Key != "" {
		cert, err := read("cert", t.Cert)
		if err != nil {
			return nil, err
		}
		key, err := read("key", t.Key)
		if err != nil {
			return nil, err
		}
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("docker: tls.cert and tls.key: %w", err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}

// Name returns "docker".
func (p *Provider) Name() string { return providerName }

// Run connects to the engine, publishes a snapshot of the current
// containers, then (with watch on) re-lists on every container or network
// event that can change routing — start, die, stop, kill, destroy, pause,
// unpause, rename, health_status and network connect/disconnect — and
// publishes again when the snapshot changed. Bursts coalesce: events that
// arrive during a re-list, or less than relistInterval after the last
// list, cause one more re-list, not one each.
//
// It returns nil when ctx is done, and an error when the engine cannot be
// reached or the event stream breaks (the daemon stopped or restarted);
// the aggregator then retries with backoff while the last snapshot stays in
// effect, so a Docker outage never publishes an empty configuration
// (case 016); before returning such an error it publishes a Down snapshot
// naming the endpoint (a problem, kept until the engine answers again).
// Run makes only read calls.
func (p *Provider) Run(ctx context.Context, publish func(providers.Snapshot)) error {
	if len(p.endpoints) > 0 {
		return p.runMulti(ctx, publish)
	}
	err := p.watchEngine(ctx, p.endpoint, p.newClient, &watcher{publish: publish})
	if err != nil && ctx.Err() == nil {
		// A problem in /api/problems while the engine is unreachable; the
		// first snapshot after it reconnects clears it.
		publish(providers.DownSnapshot(providerName, "docker endpoint "+p.endpoint, err))
	}
	return err
}

// watchEngine is Run for one engine: w's publish receives snapshots, or,
// when w.onList is set, onList receives every changed container list.
func (p *Provider) watchEngine(ctx context.Context, endpoint string, newClient func() (dockerAPI, error), w *watcher) error {
	cli, err := newClient()
	if err != nil {
		return fmt.Errorf("docker: client for %s: %w", endpoint, err)
	}
	defer cli.Close()
	if _, err := cli.Ping(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("docker: connect %s: %w", endpoint, err)
	}
	w.p, w.cli, w.s, w.cache = p, cli, p.base, map[string]cacheEntry{}
	w.s.selfID = selfID()
	if !p.watch {
		if err := w.refresh(ctx); err != nil && ctx.Err() == nil {
			return providers.Answered(err)
		}
		<-ctx.Done()
		return nil
	}
	// Subscribe before listing so that no change falls between the two.
	evCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	evs, errs := cli.Events(evCtx, "container", "network")
	if err := w.refresh(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return providers.Answered(err)
	}
	p.log.Info("connected to docker", "endpoint", endpoint)
	listed := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-errs:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("docker: event stream from %s: %w", endpoint, err)
		case ev := <-evs:
			if !relevant(ev) {
				continue
			}
			// Coalesce: wait until relistInterval has passed since the
			// last list, take every event queued by then, re-list once.
			if err := settle(ctx, evs, errs, relistInterval-time.Since(listed)); err != nil {
				return fmt.Errorf("docker: event stream from %s: %w", endpoint, err)
			}
			if ctx.Err() != nil {
				return nil
			}
			if err := w.refresh(ctx); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return providers.Answered(err)
			}
			listed = time.Now()
		}
	}
}

// selfID returns the hostname when it looks like a Docker container ID
// prefix (Docker's default hostname is the 12-character short ID), else "".
func selfID() string {
	h, err := os.Hostname()
	if err != nil || len(h) < 12 {
		return ""
	}
	for _, r := range h {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return ""
		}
	}
	return h
}

// watcher holds the state of one Run.
type watcher struct {
	p       *Provider
	cli     dockerAPI
	s       settings
	publish func(providers.Snapshot)
	// onList, when set, receives each container list that differs from
	// the previous one instead of publish (several engines, multi.go).
	onList func([]containerInfo)
	last   []byte // JSON of the last published snapshot
	hostOK bool   // s.hostIP resolved
	cache  map[string]cacheEntry
}

// refresh lists, builds and publishes when the snapshot changed.
func (w *watcher) refresh(ctx context.Context) error {
	start := time.Now()
	cs, err := w.list(ctx)
	if err != nil {
		return err
	}
	if w.onList != nil {
		b, err := json.Marshal(cs)
		if err != nil {
			return fmt.Errorf("docker: encode containers: %w", err)
		}
		if string(b) != string(w.last) {
			w.last = b
			w.onList(cs)
		}
		return nil
	}
	snap := build(cs, w.s)
	b, err := json.Marshal(snap)
	if err != nil {
		return fmt.Errorf("docker: encode snapshot: %w", err)
	}
	if string(b) == string(w.last) {
		return nil
	}
	w.last = b
	w.publish(snap)
	if w.p.log.Enabled(ctx, slog.LevelDebug) {
		w.p.log.Debug("docker snapshot published", "containers", len(cs), "routers", len(snap.Config.HTTP.Routers),
			"services", len(snap.Config.HTTP.Services), "problems", len(snap.Problems), "took", time.Since(start))
	}
	return nil
}

// maxEngineLabelBytes bounds the labels (keys and values, every prefix) of
// all the containers of one engine held at once: 64 MiB, four times what
// one container may carry (label.MaxTotalBytes). Labels of 4 MiB on each of
// 5 000 containers (every one within the per-container limits) made Gantry
// hold 1.5 GB and climbing; past this bound the list is an error naming
// the container that crossed it, and the last good configuration stays.
var maxEngineLabelBytes = 4 * label.MaxTotalBytes

// labelBytes is the size of c's labels: the bytes of every key and value.
func labelBytes(c containerInfo) int {
	n := 0
	for k, v := range c.Labels {
		n += len(k) + len(v)
	}
	return n
}

// list inspects every container, running or not (build filters them). A
// container whose list entry did not change since the last list (state,
// health, networks, ports) is not inspected again: a re-list after an event
// costs one list call plus one inspect per changed container. A container
// that vanishes between list and inspect is skipped.
func (w *watcher) list(ctx context.Context) ([]containerInfo, error) {
	sum, err := w.cli.ContainerList(ctx)
	if err != nil {
		return nil, fmt.Errorf("docker: list containers: %w", err)
	}
	out := make([]containerInfo, 0, len(sum))
	seen := make(map[string]bool, len(sum))
	total := 0
	hold := func(c containerInfo) error {
		if total += labelBytes(c); total > maxEngineLabelBytes {
			return fmt.Errorf("docker: container %s (%s) brings the labels of the containers listed to %d bytes, over the %d held at most for one engine: nothing of this list is applied", c.Name, shortID(c.ID), total, maxEngineLabelBytes)
		}
		out = append(out, c)
		return nil
	}
	for _, s := range sum {
		seen[s.ID] = true
		fp := fingerprint(s)
		if ce, ok := w.cache[s.ID]; ok && ce.fp == fp {
			if err := hold(ce.info); err != nil {
				return nil, err
			}
			continue
		}
		in, err := w.cli.ContainerInspect(ctx, s.ID)
		if err != nil {
			if errors.Is(err, engineapi.ErrNotFound) {
				continue
			}
			return nil, fmt.Errorf("docker: inspect container %s: %w", shortID(s.ID), err)
		}
		c := fromInspect(in)
		if target, ok := strings.CutPrefix(c.NetworkMode, "container:"); ok {
			// network_mode container:X shares X's network stack and
			// addresses; X can change on its own, so c is never cached.
			if tin, err := w.cli.ContainerInspect(ctx, target); err == nil {
				c.Networks = networksOf(tin.NetworkSettings.Networks)
			} else if err != nil && !errors.Is(err, engineapi.ErrNotFound) {
				return nil, fmt.Errorf("docker: inspect container %s (network of %s): %w", shortID(target), c.Name, err)
			}
			fp = ""
		}
		if c.NetworkMode == "host" && !w.hostOK {
			w.s.hostIP, w.hostOK = hostAddress(ctx), true
		}
		if err := hold(c); err != nil {
			return nil, err
		}
		if fp != "" {
			w.cache[s.ID] = cacheEntry{fp: fp, info: c}
		}
	}
	for id := range w.cache {
		if !seen[id] {
			delete(w.cache, id)
		}
	}
	return out, nil
}

// cacheEntry is an inspected container and the fingerprint of the list
// entry it was inspected for.
type cacheEntry struct {
	fp   string
	info containerInfo
}

// healthInStatus finds the health in a list entry's Status text, such as
// "Up 3 minutes (healthy)" or "Up 1 second (health: starting)".
var healthInStatus = regexp.MustCompile(`\((healthy|unhealthy|health: starting)\)`)

// fingerprint summarises what of a list entry can change for one
// container: its state, health, network addresses and ports. Labels and the
// network mode are fixed for a container's life; its name can change
// (rename), so the name is included too.
func fingerprint(s engineapi.Summary) string {
	f := struct {
		Names  []string
		State  string
		Health string
		Nets   map[string]string
		Ports  []engineapi.Port
	}{Names: s.Names, State: s.State, Health: healthInStatus.FindString(s.Status), Ports: s.Ports, Nets: map[string]string{}}
	for n, ep := range s.NetworkSettings.Networks {
		if ep != nil {
			f.Nets[n] = ep.IPAddress + " " + ep.GlobalIPv6Address
		}
	}
	b, _ := json.Marshal(f)
	return string(b)
}

// hostAddress resolves the Docker host as Traefik does for host-network
// containers: host.docker.internal, then host.containers.internal, else
// 127.0.0.1.
func hostAddress(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for _, h := range []string{"host.docker.internal", "host.containers.internal"} {
		if addrs, err := net.DefaultResolver.LookupHost(ctx, h); err == nil && len(addrs) > 0 {
			return addrs[0]
		}
	}
	return "127.0.0.1"
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
