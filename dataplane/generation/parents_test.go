package generation_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// Multi-layer routing (router parentRefs, Traefik v3.6): the parent's
// middleware edits the request, then the children's rules see the edited
// request; no matching child is 404; broken hierarchies disable only the
// routers concerned, with the reason.
func TestParentRefs(t *testing.T) {
	admin, user := dptest.EchoBackend(t, "admin"), dptest.EchoBackend(t, "user")
	h := newHarness(t, nil, nil)
	defer dptest.CloseIdle()
	tbl := h.Apply(fmt.Sprintf(`
http:
  routers:
    api@file:   {rule: "PathPrefix(`+"`/api`"+`)", middlewares: [role@file]}
    admin@file: {rule: "Header(`+"`X-User-Role`, `admin`"+`)", service: admin@file, parentRefs: [api@file], priority: 100}
    user@file:  {rule: "PathPrefix(`+"`/`"+`)", service: user@file, parentRefs: [api@file], middlewares: [tag@file]}
    deep@file:  {rule: "PathPrefix(`+"`/api/deep`"+`)", parentRefs: [api@file], priority: 200}
    leaf@file:  {rule: "Path(`+"`/api/deep/x`"+`)", service: admin@file, parentRefs: [deep@file]}
    orphan@file: {rule: "PathPrefix(`+"`/`"+`)", service: user@file, parentRefs: [nope@file]}
    withep@file: {rule: "PathPrefix(`+"`/`"+`)", service: user@file, parentRefs: [api@file], entryPoints: [web]}
    a@file: {rule: "PathPrefix(`+"`/a`"+`)", parentRefs: [b@file]}
    b@file: {rule: "PathPrefix(`+"`/b`"+`)", parentRefs: [a@file]}
    svcparent@file: {rule: "PathPrefix(`+"`/p`"+`)", service: user@file}
    kid@file: {rule: "PathPrefix(`+"`/`"+`)", service: user@file, parentRefs: [svcparent@file]}
  middlewares:
    role@file: {headers: {customRequestHeaders: {X-User-Role: admin}}}
    tag@file:  {headers: {customRequestHeaders: {X-Tag: user}}}
  services:
    admin@file: {loadBalancer: {servers: [{url: %q}]}}
    user@file:  {loadBalancer: {servers: [{url: %q}]}}
`, admin.URL, user.URL), generation.Options{})
	rep := tbl.Report()
	for _, n := range []string{"api@file", "admin@file", "user@file", "deep@file", "leaf@file"} {
		if st := rep.Routers[n]; st == nil || st.Status != "enabled" {
			t.Errorf("router %s: %+v, want enabled", n, st)
		}
	}
	for n, want := range map[string]string{
		"orphan@file":    `parent router "nope@file" does not exist`,
		"withep@file":    "entryPoints: set on a child router",
		"a@file":         "not reached from a root router",
		"svcparent@file": "has child routers",
	} {
		if st := rep.Routers[n]; st == nil || st.Status != "disabled" || !strings.Contains(strings.Join(st.Errors, "; "), want) {
			t.Errorf("router %s: %+v, want disabled with %q", n, st, want)
		}
	}
	// The parent's middleware set X-User-Role: admin, so the admin child
	// (priority 100) matches although the client sent no such header.
	if code, body := h.Get("web", "x", "/api/v1"); code != 200 || dptest.EchoHeader(body, "Name") != "admin" {
		t.Errorf("/api/v1: %d %q, want admin", code, dptest.FirstLines(body, 1))
	}
	if code, body := h.Get("web", "x", "/api/deep/x"); code != 200 || dptest.EchoHeader(body, "Name") != "admin" {
		t.Errorf("/api/deep/x through an intermediate router: %d %q", code, dptest.FirstLines(body, 1))
	}
	if code, _ := h.Get("web", "x", "/api/deep/y"); code != 404 {
		t.Errorf("/api/deep/y matches the intermediate router and no child: %d, want 404", code)
	}
	if code, _ := h.Get("web", "x", "/other"); code != 404 {
		t.Errorf("/other: %d, want 404 (children are not attached to the entrypoint)", code)
	}
	// Without the parent's header the user child answers, with its own middleware.
	tbl = h.Apply(fmt.Sprintf(`
http:
  routers:
    api@file:   {rule: "PathPrefix(`+"`/api`"+`)"}
    admin@file: {rule: "Header(`+"`X-User-Role`, `admin`"+`)", service: admin@file, parentRefs: [api@file], priority: 100}
    user@file:  {rule: "PathPrefix(`+"`/`"+`)", service: user@file, parentRefs: [api@file], middlewares: [tag@file]}
  middlewares:
    tag@file:  {headers: {customRequestHeaders: {X-Tag: user}}}
  services:
    admin@file: {loadBalancer: {servers: [{url: %q}]}}
    user@file:  {loadBalancer: {servers: [{url: %q}]}}
`, admin.URL, user.URL), generation.Options{})
	if code, body := h.Get("web", "x", "/api/v1"); code != 200 || dptest.EchoHeader(body, "Name") != "user" || dptest.EchoHeader(body, "X-Tag") != "user" {
		t.Errorf("/api/v1 without the role: %d %q", code, dptest.FirstLines(body, 3))
	}
}
