package dataplane

import (
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"log/slog"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
)

// harness is a real Server with real listeners over a Pool, compiling
// configurations through router.Compile the way cmd/gantry does.
type harness = dptest.Harness[*Server]

// newHarness starts a Server on eps (nil: "web" on 127.0.0.1:0) that
// names itself "gantry-test" (X-Forwarded-Server); each setup function
// runs on it before it starts. Cleanup shuts everything down.
func newHarness(t testing.TB, eps map[string]*static.EntryPoint, obs observe.Observer, setup ...func(*Server)) *harness {
	t.Helper()
	return dptest.New(t, eps, obs, func(log *slog.Logger, active *router.Active, eps map[string]*static.EntryPoint, obs observe.Observer) (*Server, error) {
		srv, err := NewServer(log, active, eps, obs)
		if err != nil {
			return nil, err
		}
		srv.setHostname("gantry-test")
		for _, f := range setup {
			f(srv)
		}
		return srv, nil
	}, RedirectRoutes)
}

// tlsDial dials addr with TLS, trusting nothing: tests check the served
// certificate themselves.
func tlsDial(t testing.TB, addr, sni string, alpn ...string) *tls.Conn {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{ServerName: sni, InsecureSkipVerify: true, NextProtos: alpn}) //nolint:gosec // test inspects the certificate itself
	if err != nil {
		t.Fatalf("tls dial %s (sni %q): %v", addr, sni, err)
	}
	return c
}

// setHostname overrides the X-Forwarded-Server value.
func (s *Server) setHostname(h string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hostname = h
	for _, ep := range s.eps {
		ep.hostname = h
	}
}

// acceptKey computes Sec-WebSocket-Accept (RFC 6455 §4.2.2).
func acceptKey(key string) string {
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h[:])
}

// decodeYAML decodes a dynamic configuration into a Merged.
func decodeYAML(t testing.TB, y string) (*providers.Merged, error) {
	t.Helper()
	c, err := config.Decode([]byte(y), config.YAML)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return &providers.Merged{Version: "test", Config: c}, nil
}
