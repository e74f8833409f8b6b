package consul

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
)

func TestNewCatalogRejectsBadOptions(t *testing.T) {
	yes := true
	tests := []struct {
		name string
		opts static.ConsulCatalog
		want string
	}{
		{"constraint syntax", static.ConsulCatalog{Constraints: "Tag(`a`) &&"}, "constraints"},
		{"constraint function", static.ConsulCatalog{Constraints: "Label(`a`, `b`)"}, `unknown function "Label"`},
		{"constraint regexp", static.ConsulCatalog{Constraints: "TagRegex(`(`)"}, "TagRegex"},
		{"default rule", static.ConsulCatalog{DefaultRule: "Host(`{{ .Name `)"}, "defaultRule"},
		{"strict checks", static.ConsulCatalog{StrictChecks: []string{"passing", "ok"}}, `strictChecks "ok"`},
		{"stale and consistent", static.ConsulCatalog{Stale: true, RequireConsistent: true}, "mutually exclusive"},
		{"connect", static.ConsulCatalog{ConnectAware: true}, "connectAware"},
		{"namespaces", static.ConsulCatalog{Namespaces: []string{"ns1"}}, "namespaces"},
		{"scheme", static.ConsulCatalog{Endpoint: &static.ConsulEndpoint{Scheme: "ftp"}}, "scheme"},
		{"tls half", static.ConsulCatalog{Endpoint: &static.ConsulEndpoint{TLS: &config.ClientTLS{Cert: "/c.pem"}}}, "cert and key"},
		{"tls missing file", static.ConsulCatalog{Endpoint: &static.ConsulEndpoint{TLS: &config.ClientTLS{CA: "/nonexistent/ca.pem"}}}, "endpoint tls ca"},
		{"exposed but connect by default", static.ConsulCatalog{ExposedByDefault: &yes, ConnectByDefault: true}, "connectByDefault"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewCatalog(tt.opts, discard())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestNewKVRejectsBadOptions(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts static.ConsulKV
		want string
	}{
		{"namespaces", static.ConsulKV{Namespaces: []string{"a"}}, "namespaces"},
		{"scheme", static.ConsulKV{Endpoints: []string{"gopher://127.0.0.1:8500"}}, "endpoint gopher://127.0.0.1:8500"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewKV(tt.opts, discard())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestConstraints(t *testing.T) {
	tags := []string{"public", "env=prod", "team-a"}
	for _, tt := range []struct {
		expr string
		want bool
	}{
		{"", true},
		{"Tag(`public`)", true},
		{"Tag(`Public`)", false},
		{`Tag("public")`, true},
		{"Tag(`pub`)", false},
		{"!Tag(`public`)", false},
		{"TagRegex(`^env=(prod|staging)$`)", true},
		{"TagRegex(`dev`)", false},
		{"TagRegex(`team`)", true},
		{"Tag(`public`) && TagRegex(`^env=dev$`)", false},
		{"Tag(`internal`) || Tag(`team-a`)", true},
		{"!(Tag(`internal`) || Tag(`private`)) && Tag(`public`)", true},
		{"Tag(`a`) || Tag(`b`) && Tag(`public`)", false},
		{"Tag(`public`) || Tag(`b`) && Tag(`c`)", true},
		{"  Tag( `public` )  ", true},
	} {
		c, err := parseConstraint(tt.expr)
		if err != nil {
			t.Errorf("%q: %v", tt.expr, err)
			continue
		}
		if got := c(tags); got != tt.want {
			t.Errorf("%q on %v: got %v, want %v", tt.expr, tags, got, tt.want)
		}
	}
	for _, bad := range []string{"Tag(`a`", "Tag(a)", "Tag(`a`, `b`)", "Tag(`a`) &&", "(Tag(`a`)", "Tag(`a`) Tag(`b`)", "&& Tag(`a`)", "Tag(\"unterminated)"} {
		if _, err := parseConstraint(bad); err == nil {
			t.Errorf("%q: got no error", bad)
		}
	}
}

// TestCatalogCustomPrefix: a custom prefix replaces traefik; gantry is
// always read too.
func TestCatalogCustomPrefix(t *testing.T) {
	no := false
	c, err := NewCatalog(static.ConsulCatalog{Prefix: "edge", ExposedByDefault: &no}, discard())
	if err != nil {
		t.Fatal(err)
	}
	snap := c.b.build(map[string][]*api.ServiceEntry{
		"a": {entry("n1", "a-1", "a", "10.0.0.1", 80, "edge.enable=true", "edge.http.routers.a.rule=Host(`a.test`)")},
		"b": {entry("n1", "b-1", "b", "10.0.0.2", 80, "edge.enable=true", "gantry.http.routers.b.rule=Host(`b.test`)")},
		"c": {entry("n1", "c-1", "c", "10.0.0.3", 80, "traefik.enable=true", "traefik.http.routers.c.rule=Host(`c.test`)")},
	})
	for name, want := range map[string]string{"a": "Host(`a.test`)", "b": "Host(`b.test`)", "c": ""} {
		r := snap.Config.HTTP.Routers[name]
		switch {
		case want == "" && r != nil:
			t.Errorf("router %s: got %+v, want none (traefik.* is not read with prefix edge)", name, r)
		case want != "" && (r == nil || r.Rule != want):
			t.Errorf("router %s: got %+v, want rule %s", name, r, want)
		}
	}
}

// TestCatalogPolling: with watch false, queries carry no index and run
// every refreshInterval (Traefik's default mode).
func TestCatalogPolling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeConsul()
		f.services["api"] = []*api.ServiceEntry{entry("n1", "api-1", "api", "10.0.0.1", 80)}
		no := false
		pub, stop := runProvider(t, fakeCatalog(t, f, static.ConsulCatalog{Watch: &no, RefreshInterval: config.Duration(3 * time.Second)}))
		defer stop()
		synctest.Wait()
		wantServers(t, pub, "api", "http://10.0.0.1:80")
		f.update(func(f *fakeConsul) { f.services["api"][0] = entry("n1", "api-1", "api", "10.0.0.2", 80) })
		synctest.Wait()
		wantServers(t, pub, "api", "http://10.0.0.1:80") // not before the next poll
		time.Sleep(3 * time.Second)
		synctest.Wait()
		wantServers(t, pub, "api", "http://10.0.0.2:80")
		for _, r := range f.requests() {
			if r.index != "" {
				t.Fatalf("request %s carried index %s in polling mode", r.path, r.index)
			}
		}
	})
}

// TestKVRun: the KV provider follows puts and deletes with blocking
// queries, fails over to the next endpoint (no Down snapshot for that),
// and publishes one Down snapshot (the aggregator keeps the last
// configuration) while every endpoint fails.
func TestKVRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeConsul()
		f.kv["traefik/http/routers/r/rule"] = "Host(`r.test`)"
		k, err := NewKV(static.ConsulKV{Endpoints: []string{"127.0.0.1:1", "http://127.0.0.1:2"}}, discard())
		if err != nil {
			t.Fatal(err)
		}
		down := newFakeConsul()
		down.fail = 1 << 30
		k.clients = []*api.Client{down.client(), f.client()}
		pub, stop := runProvider(t, k)
		defer stop()
		synctest.Wait()
		time.Sleep(backoffMax) // the first endpoint fails, the second answers
		synctest.Wait()
		if pub.count() == 0 || pub.last().Config.HTTP.Routers["r"] == nil {
			t.Fatalf("router r not published after failing over")
		}
		f.update(func(f *fakeConsul) { f.kv["traefik/http/routers/s/rule"] = "Host(`s.test`)" })
		synctest.Wait()
		if pub.last().Config.HTTP.Routers["s"] == nil {
			t.Fatalf("router s not published after put")
		}
		f.update(func(f *fakeConsul) { delete(f.kv, "traefik/http/routers/r/rule") })
		synctest.Wait()
		if pub.last().Config.HTTP.Routers["r"] != nil {
			t.Fatalf("router r still published after delete")
		}
		n := pub.count()
		f.mu.Lock()
		f.fail = 1 << 30
		f.mu.Unlock()
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if d := pub.last(); pub.count() != n+1 || d.Down == "" || len(d.Problems) != 1 || d.Problems[0].Source != "consul kv traefik/" {
			t.Fatalf("while every endpoint failed: %d snapshots, last %+v; want one Down snapshot naming the KV tree", pub.count()-n, d)
		}
		f.update(func(f *fakeConsul) { f.fail = 0; delete(f.kv, "traefik/http/routers/s/rule") })
		// The next attempt may go to the dead endpoint first: two backoffs.
		time.Sleep(3 * backoffMax)
		synctest.Wait()
		if up := pub.last(); up.Config.HTTP.Routers["s"] != nil || up.Down != "" {
			t.Fatalf("deletion after recovery not published (down %q)", up.Down)
		}
	})
}

// TestCatalogSkipsConnectProxies: sidecar proxies and gateways are not
// routed (they speak Consul Connect's mTLS).
func TestCatalogSkipsConnectProxies(t *testing.T) {
	c, err := NewCatalog(static.ConsulCatalog{}, discard())
	if err != nil {
		t.Fatal(err)
	}
	proxy := entry("n1", "web-sidecar-proxy", "web-sidecar-proxy", "10.0.0.1", 21000)
	proxy.Service.Kind = api.ServiceKindConnectProxy
	snap := c.b.build(map[string][]*api.ServiceEntry{
		"web":               {entry("n1", "web-1", "web", "10.0.0.1", 80)},
		"web-sidecar-proxy": {proxy},
	})
	if _, ok := snap.Config.HTTP.Routers["web"]; !ok {
		t.Errorf("router web missing")
	}
	if r, ok := snap.Config.HTTP.Routers["web-sidecar-proxy"]; ok {
		t.Errorf("sidecar proxy routed: %+v", r)
	}
}

// TestCatalogQueryModes: stale, cache and requireConsistent map onto
// Consul's query options (sent as ?stale, ?cached, ?consistent).
func TestCatalogQueryModes(t *testing.T) {
	for _, tt := range []struct {
		opts static.ConsulCatalog
		want api.QueryOptions
	}{
		{static.ConsulCatalog{}, api.QueryOptions{}},
		{static.ConsulCatalog{Stale: true}, api.QueryOptions{AllowStale: true}},
		{static.ConsulCatalog{Cache: true}, api.QueryOptions{UseCache: true}},
		{static.ConsulCatalog{RequireConsistent: true}, api.QueryOptions{RequireConsistent: true}},
	} {
		c, err := NewCatalog(tt.opts, discard())
		if err != nil {
			t.Fatal(err)
		}
		got := c.spec.base
		if got.AllowStale != tt.want.AllowStale || got.UseCache != tt.want.UseCache || got.RequireConsistent != tt.want.RequireConsistent {
			t.Errorf("%+v: got stale=%v cache=%v consistent=%v, want %v %v %v", tt.opts, got.AllowStale, got.UseCache,
				got.RequireConsistent, tt.want.AllowStale, tt.want.UseCache, tt.want.RequireConsistent)
		}
		if c.spec.wait != DefaultWaitTime || c.spec.poll != 0 {
			t.Errorf("%+v: got wait %v poll %v, want %v and blocking queries", tt.opts, c.spec.wait, c.spec.poll, DefaultWaitTime)
		}
	}
}
