package consul

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/hashicorp/consul/api"

	"github.com/gantry-proxy/gantry/config/static"
)

// BenchmarkCatalogBuild measures one full build from scratch (the first
// snapshot): 100 services of 3 instances.
func BenchmarkCatalogBuild(b *testing.B) {
	c, data := benchCatalog(b)
	b.ReportAllocs()
	for b.Loop() {
		s := c.b.build(data)
		if len(s.Config.HTTP.Routers) != 100 {
			b.Fatalf("got %d routers", len(s.Config.HTTP.Routers))
		}
	}
}

// BenchmarkCatalogRebuildOne measures what Run does when one service of
// the 100 changes: decode that service again, reuse the other 99 parts,
// merge everything.
func BenchmarkCatalogRebuildOne(b *testing.B) {
	c, data := benchCatalog(b)
	names := slices.Sorted(maps.Keys(data))
	parts := make([]*servicePart, len(names))
	for i, n := range names {
		parts[i] = c.b.buildService(n, data[n])
	}
	b.ReportAllocs()
	for b.Loop() {
		parts[0] = c.b.buildService(names[0], data[names[0]])
		s := assemble(parts)
		if len(s.Config.HTTP.Routers) != 100 {
			b.Fatalf("got %d routers", len(s.Config.HTTP.Routers))
		}
	}
}

// benchCatalog makes 100 services of 3 instances, each with a rule and a
// middleware.
func benchCatalog(b *testing.B) (*Catalog, map[string][]*api.ServiceEntry) {
	c, err := NewCatalog(static.ConsulCatalog{}, discard())
	if err != nil {
		b.Fatal(err)
	}
	data := map[string][]*api.ServiceEntry{}
	for i := range 100 {
		name := fmt.Sprintf("svc-%d", i)
		for j := range 3 {
			data[name] = append(data[name], entry(fmt.Sprintf("n%d", j), fmt.Sprintf("%s-%d", name, j), name,
				fmt.Sprintf("10.0.%d.%d", i, j), 8080,
				fmt.Sprintf("traefik.http.routers.%s.rule=Host(`%s.example.com`)", name, name),
				fmt.Sprintf("traefik.http.routers.%s.middlewares=strip-%d", name, i),
				fmt.Sprintf("traefik.http.middlewares.strip-%d.stripprefix.prefixes=/api", i)))
		}
	}
	return c, data
}

// BenchmarkDecodeKV measures decoding a KV tree of 50 routers and services
// (250 keys).
func BenchmarkDecodeKV(b *testing.B) {
	pairs := map[string]string{}
	for i := range 50 {
		r := fmt.Sprintf("traefik/http/routers/r%d/", i)
		pairs[r+"rule"] = fmt.Sprintf("Host(`r%d.example.com`)", i)
		pairs[r+"service"] = fmt.Sprintf("s%d", i)
		pairs[r+"entryPoints/0"] = "web"
		s := fmt.Sprintf("traefik/http/services/s%d/loadBalancer/servers/", i)
		pairs[s+"0/url"] = fmt.Sprintf("http://10.0.0.%d:80", i)
		pairs[s+"1/url"] = fmt.Sprintf("http://10.0.1.%d:80", i)
	}
	b.ReportAllocs()
	for b.Loop() {
		cfg, ps := DecodeKV(pairs, "traefik")
		if len(ps) > 0 || len(cfg.HTTP.Routers) != 50 {
			b.Fatalf("got %d routers, problems %v", len(cfg.HTTP.Routers), ps)
		}
	}
}
