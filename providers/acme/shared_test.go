package acme

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
)

// memShared is an in-memory shared store: memKV plus locks and backoffs.
type memShared struct {
	memKV
	locks    sync.Map // name -> chan struct{} (capacity 1)
	bmu      sync.Mutex
	backoffs map[string]orderBackoff
}

func (s *memShared) Lock(ctx context.Context, name string) (context.Context, func(), error) {
	ch, _ := s.locks.LoadOrStore(name, make(chan struct{}, 1))
	select {
	case ch.(chan struct{}) <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	var once sync.Once
	return ctx, func() { once.Do(func() { <-ch.(chan struct{}) }) }, nil
}

func (s *memShared) Backoff(_ context.Context, name string) (orderBackoff, error) {
	s.bmu.Lock()
	defer s.bmu.Unlock()
	return s.backoffs[name], nil
}

func (s *memShared) SetBackoff(_ context.Context, name string, b orderBackoff) error {
	s.bmu.Lock()
	defer s.bmu.Unlock()
	if s.backoffs == nil {
		s.backoffs = map[string]orderBackoff{}
	}
	s.backoffs[name] = b
	return nil
}

func (s *memShared) Delete(_ context.Context, b, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, b+"/"+key)
	return nil
}

func (s *memShared) Health() error  { return nil }
func (s *memShared) String() string { return "mem://shared" }

// A failed order is backed off once for every instance sharing the store:
// a second instance wanting the same domain does not contact the CA before
// the stored next attempt, and reports the first instance's failure.
func TestSharedBackoff(t *testing.T) {
	// The CA answers every request with an ACME error: the order fails and
	// is retried no sooner than retryCA (30 s) later.
	var contacts atomic.Int64
	ca := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		contacts.Add(1)
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"type":"urn:ietf:params:acme:error:unauthorized","detail":"this CA refuses everything","status":403}`))
	}))
	defer ca.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	shared := &memShared{}
	cfg := map[string]*static.ACME{"le": {CAServer: ca.URL + "/dir", CACertificates: []string{caFile}, TLSChallenge: &static.TLSChallenge{}}}
	wantD := &providers.Merged{Config: &config.Configuration{HTTP: &config.HTTPConfiguration{Routers: map[string]*config.Router{
		"d@file": {RouterCommon: config.RouterCommon{Rule: "Host(`d.example.com`)"}, TLS: &config.RouterTLSConfig{CertResolver: "le"}},
	}}}}
	start := func() (*Manager, func()) {
		m := newTestManager(t, cfg, &memKV{})
		m.resolvers["le"].kv = shared
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx, func(providers.Snapshot) {}) }()
		m.Observe(wantD)
		return m, func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	}
	failedProblem := func(m *Manager) string {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			for _, p := range m.Problems() {
				if strings.Contains(p.Message, "certificate order failed") {
					return p.Message
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatal("no failed-order problem")
		return ""
	}
	m1, stop1 := start()
	p1 := failedProblem(m1)
	stop1() // from here on, every CA request is the second instance's
	seen := contacts.Load()
	if seen == 0 {
		t.Fatal("the first instance never contacted the CA")
	}
	b, _ := shared.Backoff(t.Context(), "le|d.example.com")
	if b.Failures != 1 || !b.Next.After(time.Now()) || !strings.Contains(b.Error, "refuses everything") {
		t.Fatalf("stored backoff %+v, want 1 failure with a next attempt ahead", b)
	}

	m2, stop2 := start()
	defer stop2()
	p2 := failedProblem(m2)
	time.Sleep(200 * time.Millisecond) // a wrongly started order would connect now
	if n := contacts.Load(); n != seen {
		t.Errorf("the second instance contacted the CA (%d connections, %d before it started) during the first one's backoff", n, seen)
	}
	if !strings.Contains(p2, "(1 attempts") || p1 != p2 {
		t.Errorf("second instance's problem %q, want the first's %q", p2, p1)
	}
	cs := m2.Certificates()
	if len(cs) != 1 || cs[0].State != "failed" || !cs[0].NextAttempt.Equal(b.Next) {
		t.Errorf("second instance's certificate status %+v, want failed with the stored next attempt %v", cs, b.Next)
	}
}
