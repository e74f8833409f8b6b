package consul

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/consul/api"
	"go.uber.org/goleak"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// published collects snapshots; Run's goroutine writes, the test reads.
type published struct {
	mu    sync.Mutex
	snaps []providers.Snapshot
}

func (p *published) add(s providers.Snapshot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.snaps = append(p.snaps, s)
}

func (p *published) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.snaps)
}

func (p *published) last() providers.Snapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.snaps[len(p.snaps)-1]
}

// runProvider runs p in the bubble until the returned stop is called.
func runProvider(t *testing.T, p providers.Provider) (*published, func()) {
	pub := &published{}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, pub.add) }()
	return pub, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run returned %v, want nil", err)
		}
	}
}

func fakeCatalog(t *testing.T, f *fakeConsul, opts static.ConsulCatalog) *Catalog {
	t.Helper()
	c, err := NewCatalog(opts, discard())
	if err != nil {
		t.Fatal(err)
	}
	c.client = f.client()
	return c
}

func serverURLs(c *config.Configuration, svc string) []string {
	s := c.HTTP.Services[svc]
	if s == nil || s.LoadBalancer == nil {
		return nil
	}
	var out []string
	for _, sv := range s.LoadBalancer.Servers {
		out = append(out, sv.URL)
	}
	return out
}

func wantServers(t *testing.T, pub *published, svc string, want ...string) {
	t.Helper()
	if pub.count() == 0 {
		t.Fatalf("nothing published, want servers %v", want)
	}
	got := serverURLs(pub.last().Config, svc)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("servers of %s: got %v, want %v", svc, got, want)
	}
}

func TestCatalogRunFollowsChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeConsul()
		f.services["api"] = []*api.ServiceEntry{entry("n1", "api-1", "api", "10.0.0.1", 80)}
		pub, stop := runProvider(t, fakeCatalog(t, f, static.ConsulCatalog{}))
		defer stop()

		synctest.Wait()
		if pub.count() != 1 {
			t.Fatalf("got %d snapshots after start, want exactly 1 (published once every service answered)", pub.count())
		}
		wantServers(t, pub, "api", "http://10.0.0.1:80")

		start := time.Now()
		f.update(func(f *fakeConsul) {
			f.services["api"] = append(f.services["api"], entry("n2", "api-2", "api", "10.0.0.2", 80))
		})
		synctest.Wait()
		if d := time.Since(start); d != 0 {
			t.Errorf("change seen after %v of fake time, want at once (blocking query)", d)
		}
		wantServers(t, pub, "api", "http://10.0.0.1:80", "http://10.0.0.2:80")

		f.update(func(f *fakeConsul) {
			f.services["web"] = []*api.ServiceEntry{entry("n1", "web-1", "web", "10.0.0.3", 8080)}
		})
		synctest.Wait()
		wantServers(t, pub, "web", "http://10.0.0.3:8080")

		f.update(func(f *fakeConsul) { delete(f.services, "api") })
		synctest.Wait()
		if _, ok := pub.last().Config.HTTP.Routers["api"]; ok {
			t.Errorf("router api still present after deregistration")
		}
	})
}

// TestCatalogHungQueryIsAbandoned is case 019's test note: a blocking query
// that never answers (dead TCP connection) is given up after its deadline
// and re-sent, so changes flow again.
func TestCatalogHungQueryIsAbandoned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeConsul()
		f.services["api"] = []*api.ServiceEntry{entry("n1", "api-1", "api", "10.0.0.1", 80)}
		wait := config.Duration(2 * time.Second)
		pub, stop := runProvider(t, fakeCatalog(t, f, static.ConsulCatalog{Endpoint: &static.ConsulEndpoint{EndpointWaitTime: wait}}))
		defer stop()
		synctest.Wait()
		wantServers(t, pub, "api", "http://10.0.0.1:80")

		f.mu.Lock()
		f.hang = true
		f.mu.Unlock()
		start := time.Now()
		f.update(func(f *fakeConsul) {}) // wakes the current queries; the next ones hang
		synctest.Wait()
		f.update(func(f *fakeConsul) {
			f.hang = false
			f.services["api"] = []*api.ServiceEntry{entry("n2", "api-2", "api", "10.0.0.2", 80)}
		})
		synctest.Wait()
		if got := serverURLs(pub.last().Config, "api"); fmt.Sprint(got) == "[http://10.0.0.2:80]" {
			t.Fatalf("change seen while the query hangs; the fake is not hanging")
		}
		// With a 2 s wait time a request is abandoned after 2s+2s/16+slack,
		// and retried at once: the change must be seen within 20 s.
		const bound = 20 * time.Second
		time.Sleep(bound) // fake time
		synctest.Wait()
		wantServers(t, pub, "api", "http://10.0.0.2:80")
		if d := time.Since(start); d > bound {
			t.Errorf("recovered after %v, want within %v", d, bound)
		}
	})
}

// TestCatalogErrorsKeepLastSnapshot: while Consul answers errors one Down
// snapshot is published (the aggregator keeps the configuration); retries back off exponentially up to backoffMax; the first
// query after recovery re-reads from index 0 (case 019).
func TestCatalogErrorsKeepLastSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeConsul()
		f.services["api"] = []*api.ServiceEntry{entry("n1", "api-1", "api", "10.0.0.1", 80)}
		pub, stop := runProvider(t, fakeCatalog(t, f, static.ConsulCatalog{}))
		defer stop()
		synctest.Wait()
		n := pub.count()

		// Fail from now on, without waking the blocked queries: they end at
		// their wait time unchanged, and every request after them fails.
		const failures = 20
		f.mu.Lock()
		f.fail = failures
		f.mu.Unlock()
		for {
			time.Sleep(backoffMax)
			synctest.Wait()
			f.mu.Lock()
			left := f.fail
			f.mu.Unlock()
			if left == 0 {
				break // the first answers may have published the recovery
			}
			if pub.count() > n+1 {
				t.Fatalf("published %d snapshots while Consul failed, want one (down)", pub.count()-n)
			}
		}
		// One Down snapshot: the configuration is kept (the aggregator
		// keeps the last one) and a problem names the outage (issue 23).
		pub.mu.Lock()
		var down providers.Snapshot
		if len(pub.snaps) > n {
			down = pub.snaps[n]
		}
		pub.mu.Unlock()
		if down.Down == "" || len(down.Problems) != 1 ||
			down.Problems[0].Source != "consul catalog" || !strings.Contains(down.Problems[0].Message, "unreachable") {
			t.Fatalf("while Consul failed: snapshot %+v; want a Down snapshot with its problem", down)
		}
		f.update(func(f *fakeConsul) { f.services["api"][0] = entry("n1", "api-1", "api", "10.0.0.9", 80) })
		time.Sleep(backoffMax)
		synctest.Wait()
		wantServers(t, pub, "api", "http://10.0.0.9:80")
		if up := pub.last(); up.Down != "" || len(up.Problems) != 0 {
			t.Errorf("after recovery: down %q, problems %v; want cleared", up.Down, up.Problems)
		}

		// Check the retry schedule of the service-list query.
		var fails []time.Time
		var afterFail []string
		reqs := f.requests()
		for i, r := range reqs {
			if r.path != "/v1/catalog/services" {
				continue
			}
			if r.err {
				fails = append(fails, r.at)
				continue
			}
			if i > 0 && len(fails) > 0 && len(afterFail) == 0 {
				afterFail = append(afterFail, r.index)
			}
		}
		if len(fails) < 3 {
			t.Fatalf("only %d failed list requests recorded", len(fails))
		}
		for i := 1; i < len(fails); i++ {
			gap := fails[i].Sub(fails[i-1])
			want := min(backoffMin<<(i-1), backoffMax)
			if gap < want-want/5 || gap > want+want/5 {
				t.Errorf("retry %d after %v, want %v ±20%%", i, gap, want)
			}
		}
		if len(afterFail) == 0 || afterFail[0] != "" {
			t.Errorf("first list query after the failures had index %q, want none (a full re-read)", afterFail)
		}
	})
}

// TestCatalogBoundsQueriesInFlight: with more services than query slots,
// services take turns; every service is still published and its changes
// still arrive, and the agent never sees more requests than slots.
func TestCatalogBoundsQueriesInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeConsul()
		for i := range 6 {
			name := fmt.Sprintf("s%d", i)
			f.services[name] = []*api.ServiceEntry{entry("n1", name, name, "10.0.0.1", 8000+i)}
		}
		c := fakeCatalog(t, f, static.ConsulCatalog{})
		c.spec.slots = make(chan struct{}, 2)
		c.spec.quick = make(chan struct{}, 1)
		pub, stop := runProvider(t, c)
		defer stop()
		synctest.Wait()
		if pub.count() == 0 || len(pub.last().Config.HTTP.Routers) != 6 {
			t.Fatalf("first reads waited behind blocking queries: not every service published at once")
		}
		f.update(func(f *fakeConsul) { f.services["s5"][0] = entry("n1", "s5", "s5", "10.0.0.9", 8005) })
		time.Sleep(3 * requestTimeout(DefaultWaitTime))
		synctest.Wait()
		wantServers(t, pub, "s5", "http://10.0.0.9:8005")
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.maxInflight > 3 {
			t.Errorf("%d health requests in flight at once, want at most 2 blocking + 1 quick", f.maxInflight)
		}
	})
}
