package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/docker/engineapi"
)

// engine is one Docker engine of providers.docker.endpoints.
type engine struct {
	name        string
	endpoint    string
	hostAddress string // "" for a local engine (see static.DockerEndpoint)
	newClient   func() (dockerAPI, error)
}

// Restart backoff of one engine whose watch failed: from engineMinBackoff,
// doubling up to engineMaxBackoff; a watch that lasted engineMaxBackoff
// starts again from the minimum (the aggregator's rule, per engine).
var (
	engineMinBackoff = 200 * time.Millisecond
	engineMaxBackoff = 10 * time.Second
)

var engineName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?$`)

// newEngines checks providers.docker.endpoints: names unique and made of
// letters, digits and "-", endpoints parseable; TLS files readable.
func newEngines(opts static.Docker) ([]*engine, error) {
	seen := map[string]bool{}
	var out []*engine
	for i, ep := range opts.Endpoints {
		where := fmt.Sprintf("docker: endpoints[%d]", i)
		if !engineName.MatchString(ep.Name) {
			return nil, fmt.Errorf("%s.name %q: want letters, digits and '-' (it qualifies the names of its containers)", where, ep.Name)
		}
		if seen[ep.Name] {
			return nil, fmt.Errorf("%s.name %q: used twice", where, ep.Name)
		}
		seen[ep.Name] = true
		if ep.Endpoint == "" {
			return nil, fmt.Errorf("%s.endpoint: empty", where)
		}
		u, err := engineapi.ParseEndpoint(ep.Endpoint)
		if err != nil {
			return nil, fmt.Errorf("%s.endpoint %q: %w", where, ep.Endpoint, err)
		}
		host := ep.HostAddress
		if host == "" {
			host = remoteHost(u)
		}
		one := opts
		one.Endpoint, one.TLS, one.Username, one.Password, one.HTTPClientTimeout = ep.Endpoint, ep.TLS, ep.Username, ep.Password, ep.HTTPClientTimeout
		co, err := clientOptions(one, ep.Endpoint)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		out = append(out, &engine{name: ep.Name, endpoint: ep.Endpoint, hostAddress: host,
			newClient: func() (dockerAPI, error) { return engineapi.New(co) }})
	}
	return out, nil
}

// remoteHost is the host of a remote engine's endpoint (tcp, http,
// https, ssh), "" for a local one (unix).
func remoteHost(u *url.URL) string {
	switch u.Scheme {
	case "tcp", "http", "https", "ssh":
		return u.Hostname()
	}
	return ""
}

// runMulti watches every engine independently (each with its own restart
// backoff) and publishes one snapshot built from all their containers.
// An engine that fails keeps its last container list in the snapshot and
// is a problem ("docker endpoint <name>") until it is back; the others go
// on updating. It returns nil when ctx is done, after every watch ended.
func (p *Provider) runMulti(ctx context.Context, publish func(providers.Snapshot)) error {
	var (
		mu    sync.Mutex
		lists = map[string][]containerInfo{}
		down  = map[string]string{}
	)
	changed := make(chan struct{}, 1)
	notify := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, e := range p.endpoints {
		wg.Go(func() {
			bo := providers.Backoff{Min: engineMinBackoff, Max: engineMaxBackoff}
			for {
				started := time.Now()
				w := &watcher{onList: func(cs []containerInfo) {
					for i := range cs {
						cs[i].Endpoint, cs[i].HostAddress = e.name, e.hostAddress
					}
					mu.Lock()
					lists[e.name] = cs
					delete(down, e.name)
					mu.Unlock()
					notify()
				}}
				err := p.watchEngine(ctx, e.endpoint, e.newClient, w)
				if ctx.Err() != nil {
					return
				}
				if err == nil {
					err = errors.New("watch ended")
				}
				backoff := bo.Failed(started)
				mu.Lock()
				if _, ok := down[e.name]; !ok { // the outage's first error: one stable problem until it ends
					down[e.name] = providers.Outage(err)
				}
				mu.Unlock()
				notify()
				p.log.Warn("docker endpoint failed; its last containers stay in effect", "endpoint", e.name, "error", err, "retry_in", backoff)
				if !providers.Sleep(ctx, backoff) {
					return
				}
			}
		})
	}
	s := p.base
	s.selfID = selfID()
	var last []byte
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
		mu.Lock()
		var all []containerInfo
		for _, name := range slices.Sorted(maps.Keys(lists)) {
			all = append(all, lists[name]...)
		}
		downNow := maps.Clone(down)
		mu.Unlock()
		snap := build(all, s)
		for _, name := range slices.Sorted(maps.Keys(downNow)) {
			snap.Problems = append(snap.Problems, providers.Problem{
				Provider: providerName, Source: "docker endpoint " + name, Severity: providers.SeverityError,
				Message: downNow[name] + "; its last containers stay in effect",
			})
		}
		b, err := json.Marshal(snap)
		if err != nil {
			return fmt.Errorf("docker: encode snapshot: %w", err)
		}
		if string(b) == string(last) {
			continue
		}
		last = b
		publish(snap)
	}
}
