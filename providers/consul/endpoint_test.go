package consul

import (
	"context"
	"encoding/pem"
	"io"
	stdlog "log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
)

// TestCatalogEndpointOptions runs the catalog provider against a TLS fake
// Consul on loopback and checks that every endpoint option reaches the
// wire: CA (inline PEM), basic auth, token, datacenter, wait time and the
// consistency mode.
func TestCatalogEndpointOptions(t *testing.T) {
	f := newFakeConsul()
	f.services["api"] = []*api.ServiceEntry{entry("n1", "api-1", "api", "10.0.0.1", 80)}
	var mu sync.Mutex
	var seen []*http.Request
	blockingSeen := make(chan struct{}, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Clone(context.Background()))
		mu.Unlock()
		if r.URL.Query().Has("index") {
			select {
			case blockingSeen <- struct{}{}:
			default:
			}
		}
		f.ServeHTTP(w, r)
	}))
	srv.Config.ErrorLog = stdlog.New(io.Discard, "", 0) // handshakes cut short by Close
	srv.StartTLS()
	defer srv.Close()
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))

	opts := static.ConsulCatalog{
		Endpoint: &static.ConsulEndpoint{
			Address:          strings.TrimPrefix(srv.URL, "https://"),
			DataCenter:       "dc7",
			Token:            "s3cr3t",
			EndpointWaitTime: config.Duration(7 * time.Second),
			HTTPAuth:         &static.HTTPAuth{Username: "gantry", Password: "pw"},
			TLS:              &config.ClientTLS{CA: caPEM},
		},
		Stale: true,
		Cache: true,
	}
	c, err := NewCatalog(opts, discard())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	got := make(chan providers.Snapshot, 16)
	done := make(chan error, 1)
	go func() {
		done <- c.Run(ctx, func(s providers.Snapshot) {
			select {
			case got <- s:
			default:
			}
		})
	}()
	select {
	case s := <-got:
		if u := serverURLs(s.Config, "api"); len(u) != 1 || u[0] != "http://10.0.0.1:80" {
			t.Errorf("servers: got %v", u)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("nothing published over TLS")
	}
	// Wait for a blocking query that follows the first answers.
	select {
	case <-blockingSeen:
	case <-time.After(20 * time.Second):
		t.Fatal("no blocking query within 20s")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	blocking := 0
	for _, r := range seen {
		q := r.URL.Query()
		if u, p, ok := r.BasicAuth(); !ok || u != "gantry" || p != "pw" {
			t.Errorf("%s: basic auth %q/%q, want gantry/pw", r.URL.Path, u, p)
		}
		if tok := r.Header.Get("X-Consul-Token"); tok != "s3cr3t" {
			t.Errorf("%s: token %q, want s3cr3t", r.URL.Path, tok)
		}
		if dc := q.Get("dc"); dc != "dc7" {
			t.Errorf("%s: dc %q, want dc7", r.URL.Path, dc)
		}
		if !q.Has("stale") || !q.Has("cached") {
			t.Errorf("%s: query %s lacks stale and cached", r.URL.Path, r.URL.RawQuery)
		}
		if q.Has("index") {
			blocking++
			if w := q.Get("wait"); w != "7000ms" {
				t.Errorf("%s: wait %q, want 7000ms", r.URL.Path, w)
			}
		}
	}
	if blocking == 0 {
		t.Errorf("no blocking query seen in %d requests", len(seen))
	}
}

// TestEndpointFromEnvironment: options left empty fall back to consul/api's
// environment variables, as for the consul CLI; options that are set win.
func TestEndpointFromEnvironment(t *testing.T) {
	tokens := make(chan string, 64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case tokens <- r.Header.Get("X-Consul-Token"):
		default:
		}
		if r.URL.Query().Has("index") {
			<-r.Context().Done() // nothing changes: block until the client gives up
			return
		}
		w.Header().Set("X-Consul-Index", "1")
		_, _ = w.Write([]byte("[]"))
	}))
	defer srv.Close()
	t.Setenv("CONSUL_HTTP_ADDR", strings.TrimPrefix(srv.URL, "http://"))
	t.Setenv("CONSUL_HTTP_TOKEN", "from-env")
	for _, tt := range []struct {
		name, token, want string
	}{
		{"env", "", "from-env"},
		{"option wins", "from-option", "from-option"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k, err := NewKV(static.ConsulKV{Token: tt.token}, discard())
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- k.Run(ctx, func(providers.Snapshot) {}) }()
			select {
			case got := <-tokens:
				if got != tt.want {
					t.Errorf("token %q, want %q", got, tt.want)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("no request reached CONSUL_HTTP_ADDR")
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			for len(tokens) > 0 {
				<-tokens
			}
		})
	}
}
