package dataplane

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/dataplane/generation"
)

// BenchmarkProxyH2 measures one HTTP/2 stream through the whole in-process
// path (issue 27's h2 and gRPC routes without TLS): an h2c client with 32
// streams in flight on one connection, the entrypoint's HTTP/2 server,
// entry handler, router and upstream client, to a loopback backend.
//
//   - get1k: GET of a 1 KiB answer from an HTTP/1.1 backend (the h2
//     route's shape: HTTP/2 in front, HTTP/1.1 behind);
//   - grpc: a gRPC-shaped unary call (POST, application/grpc, TE:
//     trailers, a 12-byte message) to an h2c:// backend that answers a
//     12-byte message and the Grpc-Status/Grpc-Message trailers.
//
// ns/op and allocs/op include the client and the backend (both in this
// process); compare them between versions of the proxy, not to zero.
func BenchmarkProxyH2(b *testing.B) {
	kib := bytes.Repeat([]byte("x"), 1024)
	h1 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write(kib)
	}))
	defer h1.Close()
	msg := []byte("\x00\x00\x00\x00\x07payload")
	grpc := h2cBackend(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status, Grpc-Message")
		w.Write(msg)
		w.Header().Set("Grpc-Status", "0")
		w.Header().Set("Grpc-Message", "")
	}))

	h := newHarness(b, nil, nil)
	h.Apply(fmt.Sprintf(`
http:
  routers:
    get@file: {rule: "Host(`+"`get.test`"+`)", service: get@file}
    grpc@file: {rule: "Host(`+"`grpc.test`"+`)", service: grpc@file}
  services:
    get@file: {loadBalancer: {servers: [{url: %q}]}}
    grpc@file: {loadBalancer: {servers: [{url: "h2c://%s"}]}}
`, h1.URL, grpc.Listener.Addr()), generation.Options{})
	base := "http://" + h.Addr("web")

	run := func(b *testing.B, newReq func() *http.Request, want int) {
		tr := h2cClient()
		defer tr.CloseIdleConnections()
		b.SetParallelism(32) // streams in flight, on the transport's one connection
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				resp, err := tr.RoundTrip(newReq())
				if err != nil {
					b.Error(err)
					return
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || int(n) != want {
					b.Errorf("status %d, %d bytes; want 200, %d", resp.StatusCode, n, want)
					return
				}
			}
		})
	}
	b.Run("get1k", func(b *testing.B) {
		run(b, func() *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base+"/1k", nil)
			req.Host = "get.test"
			return req
		}, len(kib))
	})
	b.Run("grpc", func(b *testing.B) {
		run(b, func() *http.Request {
			req, _ := http.NewRequest(http.MethodPost, base+"/grpc.health.v1.Health/Check", strings.NewReader("\x00\x00\x00\x00\x07request"))
			req.Host = "grpc.test"
			req.Header["Content-Type"] = []string{"application/grpc"}
			req.Header["Te"] = []string{"trailers"}
			req.Header["Grpc-Timeout"] = []string{"10S"}
			return req
		}, len(msg))
	})
}

// h2cBackend starts a backend speaking HTTP/2 with prior knowledge over
// cleartext (an h2c:// server URL's), closed when the test ends.
func h2cBackend(t testing.TB, h http.Handler) *httptest.Server {
	be := httptest.NewUnstartedServer(h)
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	be.Config.Protocols = &p
	be.Start()
	t.Cleanup(be.Close)
	return be
}
