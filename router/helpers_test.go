package router

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router/tcpmux"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// baseBuilder is the part of a Builder most router tests do not exercise;
// doubles embed it and define Build, and what else a test needs. It builds
// no parent, TCP or UDP router (each is disabled with the error), wraps
// nothing, reports no object, builds no certificate source, never tells
// negotiated options (no 421) and keeps the bare 404.
type baseBuilder struct{}

func (baseBuilder) BuildParent(context.Context, string, *config.Router, http.Handler) (http.Handler, error) {
	return nil, errors.New("the handler builder cannot build parent routers")
}

func (baseBuilder) WrapInternal(_ context.Context, _ string, _ *config.Router, h http.Handler) http.Handler {
	return h
}

func (baseBuilder) ObjectErrors() []*ObjectUse { return nil }

func (baseBuilder) BuildTLS(context.Context, *config.TLSConfiguration, TLSHosts) (func(*tls.ClientHelloInfo) (*tls.Certificate, error), []error) {
	return nil, nil
}

func (baseBuilder) NegotiatedTLSOptions(*http.Request) (string, bool) { return "", false }

func (baseBuilder) BuildNotFound(context.Context, string) (http.Handler, error) { return nil, nil }

func (baseBuilder) BuildTCP(context.Context, string, *config.TCPRouter) (tcpmux.Handler, error) {
	return nil, errors.New("no TCP handler builder")
}

func (baseBuilder) BuildUDP(context.Context, string, *config.UDPRouter) (UDPHandler, error) {
	return nil, errors.New("no UDP handler builder")
}

// nameBuilder is a trivial Builder: each router's handler answers 200 with
// the router's name as body.
type nameBuilder struct {
	baseBuilder
	built []string
}

func (b *nameBuilder) Build(_ context.Context, name string, _ *config.Router) (http.Handler, error) {
	b.built = append(b.built, name)
	return named(name), nil
}

// named is a handler that writes its own name.
type named string

func (n named) ServeHTTP(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, string(n)) }

var webOnly = Options{EntryPoints: []EntryPoint{{Name: "web"}}}

// mergedOf wraps routers (name -> rule) into a Merged where every router
// uses service "svc@test", which exists.
func mergedOf(rules map[string]string) *providers.Merged {
	c := config.New()
	c.HTTP.Services["svc@test"] = &config.Service{LoadBalancer: &config.ServersLoadBalancer{Servers: []config.Server{{URL: "http://127.0.0.1:1"}}}}
	for name, rule := range rules {
		c.HTTP.Routers[name] = &config.Router{RouterCommon: config.RouterCommon{Rule: rule, Service: "svc@test"}}
	}
	return &providers.Merged{Version: "test", Config: c}
}

// serve sends a request through the table's web entrypoint and returns the
// status and body (the winning router's name, or the 404 text).
func serve(t *testing.T, tb *Table, r *http.Request) (int, string) {
	t.Helper()
	w := httptest.NewRecorder()
	tb.Handler("web").ServeHTTP(w, r)
	return w.Code, strings.TrimSpace(w.Body.String())
}

// req builds a request for target ("http://host/path?query") with
// optional header pairs ("Name: value").
func req(method, target string, headers ...string) *http.Request {
	r := httptest.NewRequest(method, target, nil)
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		r.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return r
}
