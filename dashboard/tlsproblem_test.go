package dashboard

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/router/routertest"
)

// tlsErrBuilder builds every router and fails one certificate.
type tlsErrBuilder struct{ routertest.Base }

func (tlsErrBuilder) Build(context.Context, string, *config.Router) (http.Handler, error) {
	return http.NotFoundHandler(), nil
}

func (tlsErrBuilder) BuildTLS(context.Context, *config.TLSConfiguration, router.TLSHosts) (func(*tls.ClientHelloInfo) (*tls.Certificate, error), []error) {
	return nil, []error{errors.New("tls.certificates[0]: certFile: read /missing.pem: no such file or directory")}
}

// A certificate that fails to load shows in /api/problems, not only in the log.
func TestTLSProblemsAreListed(t *testing.T) {
	c := &config.Configuration{TLS: &config.TLSConfiguration{Certificates: []*config.CertAndStores{{Certificate: config.Certificate{CertFile: "/missing.pem", KeyFile: "/missing.key"}}}}}
	active := router.NewActive()
	active.Swap(router.Compile(context.Background(), &providers.Merged{Version: "v1", Config: c}, tlsErrBuilder{}, compileOpts))
	a, err := New(Options{Tables: RouterTables(active)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rec := do(t, a.Handler(), "GET", "/api/problems", nil)
	var got []providers.Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, rec.Body.String())
	}
	for _, p := range got {
		if p.Source == "tls" && strings.Contains(p.Message, "/missing.pem") {
			return
		}
	}
	t.Fatalf("no TLS problem in %s", rec.Body.String())
}
