package label

import (
	"strconv"
	"testing"
)

// BenchmarkDecode decodes the label set of a typical container: one router
// with TLS and middlewares, one service with a health check, two
// middlewares (18 labels).
func BenchmarkDecode(b *testing.B) {
	labels := map[string]string{
		"traefik.enable":                                                "true",
		"traefik.http.routers.web.rule":                                 "Host(`a.example.com`) && PathPrefix(`/api`)",
		"traefik.http.routers.web.entrypoints":                          "web,websecure",
		"traefik.http.routers.web.middlewares":                          "strip,hdr",
		"traefik.http.routers.web.tls":                                  "true",
		"traefik.http.routers.web.tls.certresolver":                     "le",
		"traefik.http.routers.web.tls.domains[0].main":                  "example.com",
		"traefik.http.routers.web.tls.domains[0].sans":                  "a.example.com,b.example.com",
		"traefik.http.services.web.loadbalancer.server.port":            "8080",
		"traefik.http.services.web.loadbalancer.healthcheck.path":       "/health",
		"traefik.http.services.web.loadbalancer.healthcheck.interval":   "10s",
		"traefik.http.services.web.loadbalancer.sticky.cookie.name":     "s",
		"traefik.http.middlewares.strip.stripprefix.prefixes":           "/api",
		"traefik.http.middlewares.hdr.headers.customrequestheaders.X-A": "1",
		"traefik.http.middlewares.hdr.headers.stsseconds":               "31536000",
		"com.docker.compose.project":                                    "p",
		"com.docker.compose.service":                                    "s",
		"traefik.docker.network":                                        "proxy",
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := Decode(labels, "gantry", "traefik"); len(errs) != 0 {
			b.Fatal(errs)
		}
	}
}

// BenchmarkDecodeKV decodes 100 routers and services in KV shape.
func BenchmarkDecodeKV(b *testing.B) {
	keys := map[string]string{}
	for i := range 100 {
		n := strconv.Itoa(i)
		keys["traefik.http.routers.r"+n+".rule"] = "Host(`r" + n + ".example.com`)"
		keys["traefik.http.routers.r"+n+".entrypoints.0"] = "web"
		keys["traefik.http.services.r"+n+".loadbalancer.servers.0.url"] = "http://10.0.0.1:" + n
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := DecodeAll(keys, "traefik"); len(errs) != 0 {
			b.Fatal(errs)
		}
	}
}
