package generation_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// highestRandomWeight: a client (peer IP) keeps its child; a child without
// an available server gets nobody; removing a child moves only its own
// clients; clients spread over the children.
func TestHighestRandomWeightService(t *testing.T) {
	a, b, c := dptest.EchoBackend(t, "a"), dptest.EchoBackend(t, "b"), dptest.EchoBackend(t, "c")
	h := newHarness(t, nil, nil)
	cfg := `
http:
  routers: {r@file: {rule: "PathPrefix(` + "`/`" + `)", service: hrw@file}}
  services:
    a@file: {loadBalancer: {servers: [{url: %q}]}}
    b@file: {loadBalancer: {servers: [{url: %q}]}}
    c@file: {loadBalancer: {servers: [{url: %q}]}}
    empty@file: {loadBalancer: {servers: []}}
    hrw@file: {highestRandomWeight: {services: [%s]}}
`
	mapping := func(children string) map[string]string {
		tbl := h.Apply(fmt.Sprintf(cfg, a.URL, b.URL, c.URL, children), generation.Options{})
		if st := tbl.Report().Routers["r@file"]; st.Status != "enabled" {
			t.Fatalf("router: %+v", st)
		}
		svc, err := h.Generation().Service(context.Background(), "hrw@file")
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for i := range 40 {
			ip := fmt.Sprintf("198.51.100.%d", i+1)
			for try := range 3 {
				req := httptest.NewRequest("GET", "/", nil)
				req.RemoteAddr = fmt.Sprintf("%s:%d", ip, 40000+try)
				rec := httptest.NewRecorder()
				svc.ServeHTTP(rec, req)
				got := dptest.EchoHeader(rec.Body.String(), "Name")
				if try > 0 && got != m[ip] {
					t.Fatalf("client %s moved from %s to %s", ip, m[ip], got)
				}
				m[ip] = got
			}
		}
		return m
	}
	all := mapping("{name: a@file}, {name: b@file, weight: 2}, {name: c@file}, {name: empty@file, weight: 5}")
	count := map[string]int{}
	for _, ch := range all {
		count[ch]++
	}
	if count[""] != 0 || count["a"] == 0 || count["b"] == 0 || count["c"] == 0 || count["b"] < count["a"] {
		t.Errorf("40 clients over a, b (weight 2), c and an empty child: %v", count)
	}
	noB := mapping("{name: a@file}, {name: c@file}, {name: empty@file, weight: 5}")
	for ip, was := range all {
		if was != "b" && noB[ip] != was {
			t.Errorf("client %s of %s moved to %s when b left", ip, was, noB[ip])
		}
	}
}
