package kubegateway

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// echo is a stand-in for the conformance suite's echo-basic server (one
// per Deployment "pod"): it answers every request with the JSON the
// suite's round tripper reads (path as RequestURI, host, method, proto,
// headers, namespace, pod), honours ?delay=<duration> and
// X-Echo-Set-Header ("name:value,..."), and records the paths it saw so
// that mirroring can be checked.
type echo struct {
	namespace, pod string
	port           int
	mu             sync.Mutex
	seen           []string
}

// startEcho listens on ip:0 until t ends.
func startEcho(t *testing.T, ip, namespace, pod string) *echo {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	e := &echo{namespace: namespace, pod: pod, port: ln.Addr().(*net.TCPAddr).Port}
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second, Protocols: new(http.Protocols)}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true) // h2c with prior knowledge, as echo-basic's H2C_PORT
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("echo %s/%s: %v", namespace, pod, err)
		}
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	})
	return e
}

func (e *echo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	if len(e.seen) < 10000 {
		e.seen = append(e.seen, r.URL.Path)
	}
	e.mu.Unlock()
	if d := r.URL.Query().Get("delay"); d != "" {
		dur, err := time.ParseDuration(d)
		if err != nil {
			http.Error(w, `{"message":"bad delay"}`, http.StatusInternalServerError)
			return
		}
		select {
		case <-time.After(dur):
		case <-r.Context().Done():
			return
		}
	}
	body, _ := json.MarshalIndent(map[string]any{
		"path": r.RequestURI, "host": r.Host, "method": r.Method, "proto": r.Proto,
		"headers": r.Header, "httpPort": strconv.Itoa(e.port),
		"namespace": e.namespace, "ingress": "", "service": "", "pod": e.pod,
	}, "", " ")
	for _, list := range r.Header["X-Echo-Set-Header"] {
		for kv := range strings.SplitSeq(list, ",") {
			name, value, _ := strings.Cut(strings.TrimSpace(kv), ":")
			if name == "" {
				continue
			}
			if len(w.Header()[name]) == 0 {
				w.Header()[name] = []string{value}
			} else {
				w.Header()[name][0] += "," + strings.TrimSpace(value)
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(body)
}

// saw reports whether the echo received a request for path.
func (e *echo) saw(path string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range e.seen {
		if p == path {
			return true
		}
	}
	return false
}
