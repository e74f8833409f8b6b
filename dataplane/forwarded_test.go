package dataplane

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// Case 026: from a trusted peer, several X-Forwarded-For lines are joined
// with ", " before the peer is appended.
func TestForwardedForLinesJoined(t *testing.T) {
	be := dptest.EchoBackend(t, "echo")
	h := newHarness(t, map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0", ForwardedHeaders: &static.ForwardedHeaders{TrustedIPs: []string{"127.0.0.0/8"}}}}, nil)
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
`, be.URL), generation.Options{})
	c, err := net.Dial("tcp", h.Addr("web"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: 203.0.113.7\r\nX-Forwarded-For: 198.51.100.1, 198.51.100.2\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got, want := dptest.EchoHeader(string(body), "X-Forwarded-For"), "203.0.113.7, 198.51.100.1, 198.51.100.2, 127.0.0.1"; got != want {
		t.Errorf("X-Forwarded-For = %q, want %q", got, want)
	}
}
