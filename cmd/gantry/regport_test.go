package main

import (
	"testing"

	"github.com/gantry-proxy/gantry/config/static"
)

// The Consul registration's default port is the first entrypoint that
// serves traffic: never traefik (the API), ping's or metrics' entrypoint,
// nor a UDP one; traefik's only when there is nothing else.
func TestRegistrationPort(t *testing.T) {
	eps := func(m map[string]string) map[string]*static.EntryPoint {
		out := map[string]*static.EntryPoint{}
		for n, a := range m {
			out[n] = &static.EntryPoint{Address: a}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		c    *static.Configuration
		want int
	}{
		{"traefik sorts first", &static.Configuration{EntryPoints: eps(map[string]string{"traefik": ":8080", "web": ":80", "websecure": ":443"})}, 80},
		{"udp and metrics skipped", &static.Configuration{
			EntryPoints: eps(map[string]string{"a-dns": ":53/udp", "b-metrics": ":9100", "c-ping": ":8082", "d-web": "127.0.0.1:8000"}),
			Ping:        &static.Ping{EntryPoint: "c-ping"},
			Metrics:     &static.Metrics{Prometheus: &static.Prometheus{EntryPoint: "b-metrics"}},
		}, 8000},
		{"only the API", &static.Configuration{EntryPoints: eps(map[string]string{"traefik": ":8080"})}, 8080},
		{"none", &static.Configuration{EntryPoints: eps(map[string]string{"dns": ":53/udp"})}, 0},
	} {
		if got := registrationPort(tc.c); got != tc.want {
			t.Errorf("%s: port %d, want %d", tc.name, got, tc.want)
		}
	}
}
