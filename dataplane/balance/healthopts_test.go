package balance

import (
	"log/slog"
	"net/http"
	"net/url"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gantry-proxy/gantry/config"
)

// hostname replaces the Host of the check request, headers are set on it,
// method is used as given, scheme and port replace the server's, and the
// path's query is kept (Traefik's newRequest).
func TestHealthCheckRequestShape(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got *http.Request
		hosts := handlerTransport{
			"srv:9000": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = r.Clone(r.Context())
				if r.Host != "health.example" || r.Header.Get("X-Probe") != "gantry" || r.Method != http.MethodPost || r.URL.RawQuery != "full=1" {
					w.WriteHeader(http.StatusTeapot)
				}
			}),
		}
		p := NewPool(slog.New(slog.DiscardHandler))
		defer p.Close()
		u, _ := url.Parse("https://srv:8443")
		hc := &config.ServerHealthCheck{
			Scheme: "http", Port: 9000, Path: "/healthz?full=1", Method: "post",
			Hostname: "health.example", Headers: map[string]string{"X-Probe": "gantry"},
			Interval: config.Duration(time.Second),
		}
		spec, err := NewHealthSpec(u, hc)
		if err != nil {
			t.Fatal(err)
		}
		c := p.AcquireChecker(u, spec, "t", hosts)
		defer release(t, p, c)
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		if got == nil || !c.up.Load() {
			t.Fatalf("check request %v, up %v (last error %v)", got, c.up.Load(), c.lastErr.Load())
		}
		if got.URL.Path != "/healthz" {
			t.Errorf("path %q", got.URL.Path)
		}
	})
}
