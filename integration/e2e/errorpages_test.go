package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// Case 041 and issue 26, through the binary: with the errors middleware
// rewriting an unreachable shop's 502 to 503 and answering with errsvc's
// page, the client and the entrypoint and router series get 503, shop's
// service series records what shop really answered (502), the page call
// is counted under errsvc's own series (200), and the access log's
// OriginStatus is shop's 502 beside DownstreamStatus 503.
func TestCase041ErrorsMiddlewareRecordsWhatEachServiceAnswered(t *testing.T) {
	errsvc := rawServer(t, func(c net.Conn, r *http.Request) {
		body := "page " + r.URL.RequestURI()
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	})
	dead := harness.FreeAddr(t)
	logPath := filepath.Join(t.TempDir(), "access.json")
	adm := harness.FreeAddr(t)
	p := startProxy(t, map[string]string{"web": "", "traefik": adm}, fmt.Sprintf("metrics:\n  prometheus: {addRoutersLabels: true}\naccessLog:\n  filePath: %q\n  format: json\n  bufferingSize: 0\n", logPath), fmt.Sprintf(`
http:
  routers:
    shop: {rule: "Host(`+"`shop.test`"+`)", service: shop, middlewares: [pages]}
  middlewares:
    pages:
      errors:
        status: ["404", "500-599"]
        service: errsvc
        query: "/{status}.html?from={originalStatus}"
        statusRewrites: {"502-504": 503}
  services:
    shop:   {loadBalancer: {servers: [{url: "http://%s"}]}}
    errsvc: {loadBalancer: {servers: [{url: "http://%s"}]}}
`, dead, errsvc))
	r := get(t, p.URL(t, "web", "/pay"), harness.Host("shop.test"))
	if r.StatusCode != 503 || r.Body != "page /503.html?from=502" {
		t.Fatalf("got %d %q, want 503 with errsvc's page for 503 from 502", r.StatusCode, r.Body)
	}
	harness.TryGet(t, wait, "http://"+adm+"/metrics", harness.StatusIs(200),
		harness.BodyContains(`traefik_service_requests_total{code="502",method="GET",protocol="http",service="shop@file"} 1`),
		harness.BodyContains(`traefik_service_requests_total{code="200",method="GET",protocol="http",service="errsvc@file"} 1`),
		harness.BodyContains(`traefik_entrypoint_requests_total{code="503",entrypoint="web",method="GET",protocol="http"} 1`),
		harness.BodyContains(`traefik_router_requests_total{code="503",method="GET",protocol="http",router="shop@file",service="shop@file"} 1`),
		harness.BodyLacks(`traefik_service_requests_total{code="503",method="GET",protocol="http",service="shop@file"}`))
	var entry map[string]any
	harness.Try(t, wait, func() error {
		b, err := os.ReadFile(logPath)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if strings.Contains(l, `"shop@file"`) {
				return json.Unmarshal([]byte(l), &entry)
			}
		}
		return fmt.Errorf("no access log line for shop@file in %q", b)
	})
	if entry["DownstreamStatus"] != float64(503) || entry["OriginStatus"] != float64(502) {
		t.Fatalf("access log: DownstreamStatus %v OriginStatus %v, want 503 and 502 (%v)", entry["DownstreamStatus"], entry["OriginStatus"], entry)
	}
}
