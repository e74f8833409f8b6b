package dataplane

import (
	"fmt"
	"io"
	"net/http"
	"testing"
)

// BenchmarkProxy measures one request through the whole in-process path:
// real listener, entry handler, routing table, router chain, smooth WRR,
// ReverseProxy and the shared Transport to a loopback backend, with
// keep-alive on both hops.
func BenchmarkProxy(b *testing.B) {
	body := []byte("hello, world\n")
	be := echoHandlerServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	h := newHarness(b, nil, nil)
	h.apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "Host(`+"`bench.test`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: %q}, {url: %q}]}}}
`, be.URL, be.URL+"/"), GenerationOptions{})
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	url := "http://" + h.addr("web") + "/bench"
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Host = "bench.test"
		for pb.Next() {
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
}

// BenchmarkDirect is the baseline for BenchmarkProxy: the same client and
// backend without the proxy.
func BenchmarkDirect(b *testing.B) {
	body := []byte("hello, world\n")
	be := echoHandlerServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Get(be.URL + "/bench")
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}

// BenchmarkPick is one smooth-WRR pick over 8 weighted servers from
// parallel goroutines: one atomic add, no lock, no allocation.
func BenchmarkPick(b *testing.B) {
	p := newWRR(testTargets(5, 3, 1, 1, 2, 2, 4, 1))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := p.pick(nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
