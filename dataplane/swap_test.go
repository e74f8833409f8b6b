package dataplane

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// Configuration swaps under load lose nothing (reliability.md §3.5, F3):
// clients with and without keep-alive send requests while the
// configuration is swapped 50 times (unrelated routers change, the
// service's servers stay); every request gets 200.
func TestSwapUnderLoad(t *testing.T) {
	a, b := dptest.EchoBackend(t, "a"), dptest.EchoBackend(t, "b")
	h := newHarness(t, nil, nil)
	cfg := func(i int) string {
		return fmt.Sprintf(`
http:
  routers:
    app@file: {rule: "Host(`+"`app`"+`)", service: app@file}
    other%d@file: {rule: "Host(`+"`other%d`"+`)", service: app@file}
  services:
    app@file: {loadBalancer: {servers: [{url: %q}, {url: %q}]}}
`, i, i, a.URL, b.URL)
	}
	h.Apply(cfg(0), generation.Options{})
	url := "http://" + h.Addr("web") + "/"
	stop := make(chan struct{})
	var ok, failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for i := range 4 {
		tr := &http.Transport{DisableKeepAlives: i%2 == 1}
		defer tr.CloseIdleConnections()
		client := &http.Client{Transport: tr}
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Host = "app"
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, resp.Status)
					continue
				}
				ok.Add(1)
			}
		})
	}
	for i := 1; i <= 50; i++ {
		h.Apply(cfg(i), generation.Options{})
		dptest.Eventually(t, "requests during the swap", func() bool { return ok.Load() >= int64(i*4) })
	}
	close(stop)
	wg.Wait()
	if failed.Load() != 0 {
		t.Errorf("%d of %d requests failed during swaps; first: %v", failed.Load(), failed.Load()+ok.Load(), firstErr.Load())
	}
}
