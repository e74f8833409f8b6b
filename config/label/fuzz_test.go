package label

import (
	"strings"
	"testing"
)

// FuzzDecode checks that no key or value makes Decode panic, that every
// error names a key that was given, and that a key error's object is absent
// from the result.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"traefik.http.routers.r.rule=Host(`a`)",
		"traefik.http.routers.r.tls.domains[0].sans=a,b",
		"traefik.http.services.s.loadbalancer.server.port=80",
		"traefik.http.services.s.loadbalancer.servers[1][2].url=x",
		"traefik.http.middlewares.m.headers.customrequestheaders.X=1",
		"traefik.http.middlewares.m.plugin.p.a.b=c",
		"traefik.tls.stores.default.defaultgeneratedcert.domain.sans=a",
		"traefik.http.routers.r=true",
		"traefik.http.routers.r.tls=false",
		"traefik.http..x=1",
		"traefik.http.routers.r[=1",
		"traefik.tcp.routers.r.rule=HostSNI(`*`)",
	} {
		k, v, _ := strings.Cut(s, "=")
		f.Add(k, v, "traefik.http.routers.r.priority", "7")
	}
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		labels := map[string]string{k1: v1, k2: v2}
		for _, all := range []bool{false, true} {
			c, errs := decode(labels, []string{"traefik"}, all)
			if c == nil || c.HTTP == nil {
				t.Fatal("nil configuration")
			}
			for _, e := range errs {
				if _, ok := labels[e.Key]; !ok {
					t.Errorf("error names key %q, which was not given", e.Key)
				}
				kind, name, _ := strings.Cut(e.Object, " ")
				switch kind {
				case "router":
					if c.HTTP.Routers[name] != nil {
						t.Errorf("router %q kept despite %v", name, e)
					}
				case "middleware":
					if c.HTTP.Middlewares[name] != nil {
						t.Errorf("middleware %q kept despite %v", name, e)
					}
				}
			}
		}
	})
}
