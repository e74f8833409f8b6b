package consul

import (
	"fmt"
	"testing"

	"github.com/hashicorp/consul/api"

	"github.com/gantry-proxy/gantry/config/static"
)

// BenchmarkCatalogBuild measures one full rebuild (what every catalog change
// costs): 100 services of 3 instances, each with a rule and a middleware.
func BenchmarkCatalogBuild(b *testing.B) {
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
	b.ReportAllocs()
	for b.Loop() {
		s := c.b.build(data)
		if len(s.Config.HTTP.Routers) != 100 {
			b.Fatalf("got %d routers", len(s.Config.HTTP.Routers))
		}
	}
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
