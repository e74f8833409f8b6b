package middleware

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// Case 011, the middleware side: a router's list and a chain may name
// middlewares of other providers ("headers-std@file"); names are resolved
// exactly as given (the aggregator qualifies unqualified ones), the order
// of application is the order of the list, and a reference to a
// middleware that does not exist disables what uses it with an error
// naming it.
func TestChainCrossProviderCase011(t *testing.T) {
	res := resolverFrom(t, `
http:
  middlewares:
    headers-std@file: {headers: {customResponseHeaders: {X-Std: "1"}}}
    strip@docker:     {stripPrefix: {prefixes: ["/x"]}}
    local-chain@docker: {chain: {middlewares: ["strip@docker"]}}
    broken-chain@docker: {chain: {middlewares: ["strip@docker", "auth@file"]}}
`)
	srv := front(t, res, echoBackend(t).URL, "headers-std@file", "local-chain@docker")
	resp, body := do(t, http.MethodGet, srv.URL+"/x/y", nil, nil)
	if e := seen(t, body); e.RequestURI != "/y" {
		t.Errorf("backend saw %q, want /y", e.RequestURI)
	}
	if resp.Header.Get("X-Std") != "1" {
		t.Errorf("X-Std %q, want 1", resp.Header.Get("X-Std"))
	}
	_, err := res.Middleware(context.Background(), "broken-chain@docker")
	if err == nil || !strings.Contains(err.Error(), `middleware broken-chain@docker: chain.middlewares[1]: "auth@file"`) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing auth@file: %v", err)
	}
}

func TestChainOrderAndLoops(t *testing.T) {
	res := resolverFrom(t, `
http:
  middlewares:
    a: {addPrefix: {prefix: /a}}
    b: {addPrefix: {prefix: /b}}
    ab: {chain: {middlewares: [a, b]}}
    loop1: {chain: {middlewares: [a, loop2]}}
    loop2: {chain: {middlewares: [loop1]}}
    self: {chain: {middlewares: [self]}}
    empty: {chain: {middlewares: []}}
`)
	srv := front(t, res, echoBackend(t).URL, "ab")
	_, body := do(t, http.MethodGet, srv.URL+"/p", nil, nil)
	// a runs first and prefixes /a; then b prefixes /b in front of that.
	if e := seen(t, body); e.RequestURI != "/b/a/p" {
		t.Errorf("backend saw %q, want /b/a/p", e.RequestURI)
	}
	for _, n := range []string{"loop1", "self"} {
		if _, err := res.Middleware(context.Background(), n); err == nil || !strings.Contains(err.Error(), "cycle") {
			t.Errorf("%s: %v, want a cycle error", n, err)
		}
	}
	if _, err := res.Middleware(context.Background(), "empty"); err == nil || !strings.Contains(err.Error(), "chain.middlewares: empty") {
		t.Errorf("empty chain: %v", err)
	}
}

func TestNewRejectsZeroOrManyKinds(t *testing.T) {
	if err := buildErr(t, "http:\n  middlewares:\n    m: {addPrefix: {prefix: /a}, stripPrefix: {prefixes: [/b]}}\n", "m"); err == nil || !strings.Contains(err.Error(), "want exactly one kind") {
		t.Errorf("two kinds: %v", err)
	}
	if err := buildErr(t, "http:\n  middlewares:\n    m: {plugin: {x: {}}}\n", "m"); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("plugin: %v", err)
	}
}
