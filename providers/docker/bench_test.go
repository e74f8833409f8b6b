package docker

import (
	"strconv"
	"testing"

	"github.com/gantry-proxy/gantry/config/static"
)

// BenchmarkBuild builds the snapshot of 100 running containers: 50 services
// of two replicas each, each with a router and a middleware label.
func BenchmarkBuild(b *testing.B) {
	p, err := New(static.Docker{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	var cs []containerInfo
	for i := range 100 {
		svc := "svc" + strconv.Itoa(i/2)
		cs = append(cs, containerInfo{
			ID: "id" + strconv.Itoa(i), Name: "c" + strconv.Itoa(i), State: "running",
			Labels: map[string]string{
				labelComposeProject: "p", labelComposeService: svc,
				"traefik.http.routers." + svc + ".rule":                      "Host(`" + svc + ".example.com`)",
				"traefik.http.routers." + svc + ".middlewares":               "strip",
				"traefik.http.middlewares.strip.stripprefix.prefixes":        "/api",
				"traefik.http.services." + svc + ".loadbalancer.server.port": "8080",
			},
			Networks: []netInfo{{Name: "proxy", IP: "192.0.2." + strconv.Itoa(i)}},
			Ports:    []portInfo{{Port: 8080, Proto: "tcp"}},
		})
	}
	b.ReportAllocs()
	for b.Loop() {
		s := build(cs, p.base)
		if len(s.Problems) != 0 || len(s.Config.HTTP.Services) != 50 {
			b.Fatalf("problems %v, %d services", s.Problems, len(s.Config.HTTP.Services))
		}
	}
}
