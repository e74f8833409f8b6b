package tlsroute

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// The entrypoint redirection is a router like any other (issue 26): the
// API lists web-to-websecure@internal with its middleware
// redirect-web-to-websecure@internal, and a redirected request is in the
// web entrypoint's and the router's metrics and in the access log.
func TestEntryPointRedirectIsVisible(t *testing.T) {
	dyn := t.TempDir()
	logPath := filepath.Join(t.TempDir(), "access.log")
	harness.WriteFile(t, dyn, "dynamic.yml", "http: {}\n")
	secure := harness.FreeAddr(t) // a port of its own: a fixed one may be taken
	_, securePort, _ := net.SplitHostPort(secure)
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  web:
    address: %q
    http: {redirections: {entryPoint: {to: websecure, scheme: https}}}
  websecure: {address: %q}
  traefik: {address: %q}
api: {insecure: true}
metrics:
  prometheus: {addRoutersLabels: true}
accessLog: {filePath: %q, format: json, bufferingSize: 0}
providers: {file: {directory: %q}}
`, harness.FreeAddr(t), secure, harness.FreeAddr(t), logPath, dyn))
	g.WaitOutput(t, wait, "config applied")
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("GET", "http://"+g.EntryPoints["web"]+"/x?y=1", nil)
	req.Host = "app.example.com"
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 301 || resp.Header.Get("Location") != "https://app.example.com:"+securePort+"/x?y=1" {
		t.Fatalf("redirect: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}

	var routers []struct {
		Name        string   `json:"name"`
		EntryPoints []string `json:"entryPoints"`
		Middlewares []string `json:"middlewares"`
		Service     string   `json:"service"`
		Status      string   `json:"status"`
		Provider    string   `json:"provider"`
	}
	apiJSON(t, g.EntryPoints["traefik"], "/api/http/routers", &routers)
	i := slices.IndexFunc(routers, func(r struct {
		Name        string   `json:"name"`
		EntryPoints []string `json:"entryPoints"`
		Middlewares []string `json:"middlewares"`
		Service     string   `json:"service"`
		Status      string   `json:"status"`
		Provider    string   `json:"provider"`
	}) bool {
		return r.Name == "web-to-websecure@internal"
	})
	if i < 0 {
		t.Fatalf("/api/http/routers has no web-to-websecure@internal: %+v", routers)
	}
	if r := routers[i]; !slices.Equal(r.EntryPoints, []string{"web"}) || !slices.Equal(r.Middlewares, []string{"redirect-web-to-websecure@internal"}) || r.Status != "enabled" || r.Provider != "internal" {
		t.Errorf("redirect router: %+v", r)
	}
	var mw struct {
		Name           string `json:"name"`
		Type           string `json:"type"`
		Status         string `json:"status"`
		RedirectScheme struct {
			Scheme    string `json:"scheme"`
			Port      string `json:"port"`
			Permanent bool   `json:"permanent"`
		} `json:"redirectScheme"`
		UsedBy []string `json:"usedBy"`
	}
	apiJSON(t, g.EntryPoints["traefik"], "/api/http/middlewares/redirect-web-to-websecure@internal", &mw)
	if mw.RedirectScheme.Scheme != "https" || mw.RedirectScheme.Port != securePort || !mw.RedirectScheme.Permanent || !slices.Equal(mw.UsedBy, []string{"web-to-websecure@internal"}) {
		t.Errorf("redirect middleware: %+v", mw)
	}

	// The redirect is counted after its response is written: poll.
	harness.TryGet(t, wait, "http://"+g.EntryPoints["traefik"]+"/metrics", harness.StatusIs(200),
		harness.BodyContains(`traefik_entrypoint_requests_total{code="301",entrypoint="web",method="GET",protocol="http"} 1`),
		harness.BodyContains(`router="web-to-websecure@internal"`))
	harness.Try(t, wait, func() error {
		log, _ := os.ReadFile(logPath)
		if !strings.Contains(string(log), `"RouterName":"web-to-websecure@internal"`) || !strings.Contains(string(log), `"DownstreamStatus":301`) {
			return fmt.Errorf("access log: %s", log)
		}
		return nil
	})
}
