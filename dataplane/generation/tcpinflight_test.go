package generation_test

import (
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// Case 062 and issue 26: an inFlightConn cap holds across configuration
// swaps that keep the middleware — here an unrelated service added, then
// the cap itself raised — instead of restarting from zero at every
// generation (Traefik lets a client hold the cap once per generation). A
// connection over the cap is closed before any byte reaches the backend;
// when one of the held connections closes, a new one gets through.
func TestTCPInFlightConnCountSurvivesSwaps(t *testing.T) {
	eps := map[string]*static.EntryPoint{"tcpep": {Address: "127.0.0.1:0"}}
	h := newHarness(t, eps, nil)
	echo := dptest.TCPEchoBackend(t, "e:")
	conf := func(amount int, extra string) string {
		return fmt.Sprintf(`
tcp:
  routers:
    r1: {entryPoints: [tcpep], rule: "HostSNI(`+"`*`"+`)", middlewares: [limit], service: echo}
  middlewares:
    limit: {inFlightConn: {amount: %d}}
  services:
    echo: {loadBalancer: {servers: [{address: %q}]}}
%s`, amount, echo, extra)
	}
	h.Apply(conf(2, ""), generation.Options{})
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", h.Addr("tcpep"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	refused := func(c net.Conn) bool {
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "x\n")
		_, err := c.Read(make([]byte, 16))
		return err != nil
	}
	held := []net.Conn{dial(), dial()}
	for i, c := range held {
		if got := dptest.LineTrip(t, c, fmt.Sprint(i)); got != fmt.Sprintf("e:%d", i) {
			t.Fatalf("connection %d: %q", i, got)
		}
	}
	if !refused(dial()) {
		t.Fatal("a third connection got through a cap of 2")
	}
	h.Apply(conf(2, "    other: {loadBalancer: {servers: [{address: \"127.0.0.1:1\"}]}}\n"), generation.Options{})
	if !refused(dial()) {
		t.Fatal("after an unrelated swap, a third connection got through a cap of 2: the count restarted")
	}
	h.Apply(conf(3, ""), generation.Options{})
	c3 := dial()
	if got := dptest.LineTrip(t, c3, "three"); got != "e:three" {
		t.Fatalf("cap raised to 3: third connection got %q", got)
	}
	if !refused(dial()) {
		t.Fatal("a fourth connection got through a cap of 3 raised over 2 open ones")
	}
	held[0].Close()
	var ok bool
	for range 100 { // the proxy sees the close asynchronously
		c := dial()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "again\n")
		b := make([]byte, 16)
		n, err := c.Read(b)
		c.Close()
		if err == nil && string(b[:n]) == "e:again\n" {
			ok = true
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !ok {
		t.Fatal("after one held connection closed, no new connection got through")
	}
	// The router gone and every connection closed, nothing is kept.
	h.Apply("tcp:\n  services:\n    echo: {loadBalancer: {servers: [{address: \"127.0.0.1:1\"}]}}\n", generation.Options{})
	for _, c := range append(held, c3) {
		c.Close()
	}
	dptest.Eventually(t, "the counts to be forgotten", func() bool { return h.Pool.TCPInFlightLen() == 0 })
}

// Case 062: the deprecated TCP ipWhiteList still filters and is reported
// as a warning naming the middleware (Traefik logs a deprecation).
func TestTCPIPWhiteListDeprecationWarning(t *testing.T) {
	eps := map[string]*static.EntryPoint{"tcpep": {Address: "127.0.0.1:0"}}
	h := newHarness(t, eps, nil)
	echo := dptest.TCPEchoBackend(t, "e:")
	tbl := h.Apply(fmt.Sprintf(`
tcp:
  routers:
    r2: {entryPoints: [tcpep], rule: "HostSNI(`+"`*`"+`)", middlewares: [old], service: echo}
  middlewares:
    old: {ipWhiteList: {sourceRange: ["192.0.2.1/32"]}}
  services:
    echo: {loadBalancer: {servers: [{address: %q}]}}
`, echo), generation.Options{})
	st := tbl.Report().TCPMiddlewares["old"]
	if st == nil || st.Status != "warning" || len(st.Errors) != 1 || !strings.Contains(st.Errors[0], "ipWhiteList is deprecated") {
		t.Fatalf("tcp middleware old: %+v, want a deprecation warning", st)
	}
	if r := tbl.Report().TCPRouters["r2"]; r.Status == "disabled" {
		t.Fatalf("router r2: %+v, want it served", r)
	}
	c, err := net.Dial("tcp", h.Addr("tcpep"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "x\n")
	if _, err := c.Read(make([]byte, 16)); err == nil {
		t.Fatal("127.0.0.1 got through ipWhiteList [192.0.2.1/32]")
	}
}

// Case 048: the deprecated load-balancer proxyProtocol and
// terminationDelay are warnings naming the service, saying they are
// ignored beside a serversTransport.
func TestTCPDeprecatedLoadBalancerFieldsWarn(t *testing.T) {
	eps := map[string]*static.EntryPoint{"tcpep": {Address: "127.0.0.1:0"}}
	h := newHarness(t, eps, nil)
	tbl := h.Apply(`
tcp:
  routers:
    r: {entryPoints: [tcpep], rule: "HostSNI(`+"`*`"+`)", service: both}
  services:
    both:   {loadBalancer: {serversTransport: v1, proxyProtocol: {version: 2}, terminationDelay: 50, servers: [{address: "127.0.0.1:1"}]}}
    legacy: {loadBalancer: {proxyProtocol: {version: 1}, servers: [{address: "127.0.0.1:1"}]}}
  serversTransports:
    v1: {proxyProtocol: {version: 1}}
`, generation.Options{})
	rep := tbl.Report().TCPServices
	if st := rep["both"]; st.Status != "warning" || len(st.Errors) != 2 || !strings.Contains(st.Errors[0], "loadBalancer.proxyProtocol is deprecated") || !strings.Contains(st.Errors[0], "ignored, serversTransport v1 decides") {
		t.Errorf("both: %+v", st)
	}
	if st := rep["legacy"]; st.Status != "warning" || len(st.Errors) != 1 || strings.Contains(st.Errors[0], "ignored") {
		t.Errorf("legacy: %+v", st)
	}
}
