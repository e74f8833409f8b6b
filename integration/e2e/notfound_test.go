package e2e

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// entryPoints.<ep>.http.notFound (Traefik issue #4218): a request that
// matches no router gets the page of the configured service, fetched like
// the errors middleware does, with the configured status; an entrypoint
// without it keeps the bare 404; a page service that does not exist is a
// problem and its entrypoint keeps the bare 404.
func TestNotFoundPage(t *testing.T) {
	pages := harness.StartWhoami(t, "pages")
	app := harness.StartWhoami(t, "app")
	dyn := t.TempDir()
	dynamic := fmt.Sprintf(`
http:
  routers:
    app:
      rule: Host(`+"`app.test`"+`)
      service: app
  services:
    app:
      loadBalancer:
        servers: [{url: "http://%s"}]
    pages:
      loadBalancer:
        servers: [{url: "http://%s"}]
`, app, pages)
	harness.WriteFile(t, dyn, "dynamic.yml", dynamic)
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  web:
    address: %q
    http:
      notFound:
        service: pages@file
        status: 410
        query: "/oops/{status}?from={url}"
  plain:
    address: %q
  broken:
    address: %q
    http:
      notFound:
        service: missing@file
providers:
  file:
    directory: %q
`, harness.FreeAddr(t), harness.FreeAddr(t), harness.FreeAddr(t), dyn))
	g.WaitOutput(t, wait, "config applied")

	// A routed request is untouched.
	harness.TryGet(t, wait, g.URL(t, "web", "/x"), harness.Host("app.test"), harness.StatusIs(200), harness.BodyContains("Name: app"))

	// Unmatched on web: the page service's answer, status 410.
	r := get(t, g.URL(t, "web", "/nowhere?q=1"), harness.Host("nobody.test"))
	if r.StatusCode != 410 {
		t.Fatalf("unmatched on web: status %d, want 410 (body %q)", r.StatusCode, r.Body)
	}
	e := parseEcho(r.Body)
	if e.name != "pages" {
		t.Fatalf("unmatched on web: answered by %q, want the pages service; body %q", e.name, r.Body)
	}
	wantURL := url.QueryEscape("http://nobody.test/nowhere?q=1")
	if want := "GET /oops/410?from=" + wantURL + " HTTP/1.1"; e.requestLine != want {
		t.Fatalf("page request line %q, want %q", e.requestLine, want)
	}
	if h := e.header["Host"]; len(h) == 0 || h[0] != "nobody.test" {
		t.Fatalf("page request Host %v, want the client's nobody.test", h)
	}

	// Unmatched on plain: the bare 404.
	r = get(t, g.URL(t, "plain", "/nowhere"), harness.Host("nobody.test"))
	if r.StatusCode != 404 || !strings.Contains(r.Body, "404 page not found") {
		t.Fatalf("unmatched on plain: %d %q, want the bare 404", r.StatusCode, r.Body)
	}

	// A missing page service: a problem, and the bare 404.
	g.WaitOutput(t, wait, "notFound: entrypoint broken: notFound: middleware notFound@broken")

	r = get(t, g.URL(t, "broken", "/nowhere"), harness.Host("nobody.test"))
	if r.StatusCode != 404 || !strings.Contains(r.Body, "404 page not found") {
		t.Fatalf("unmatched on broken: %d %q, want the bare 404", r.StatusCode, r.Body)
	}
}

// A notFound status outside 100-599 or an unqualified service is refused
// at load, naming the option.
func TestNotFoundPageRefused(t *testing.T) {
	g := harness.StartWith(t, harness.Options{NoWait: true, Static: fmt.Sprintf(`
entryPoints:
  web:
    address: %q
    http:
      notFound:
        service: pages
        status: 1000
`, harness.FreeAddr(t))})
	if code := g.Wait(t, wait); code == 0 {
		t.Fatal("gantry started with a bad notFound")
	}
	out := g.Output()
	for _, want := range []string{`entryPoints.web.http.notFound.service "pages": want a qualified name`} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
}
