package dataplane

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
)

// openWS opens a WebSocket through addr to the raw echo backend and
// returns an echo function (one frame there and back).
func openWS(t *testing.T, addr string) (net.Conn, func(string) error) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: ws.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("handshake: %v %v", resp, err)
	}
	return c, func(msg string) error {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if err := writeFrame(c, 1, []byte(msg)); err != nil {
			return err
		}
		_, got, err := readFrame(br)
		if err != nil {
			return err
		}
		if string(got) != msg {
			return fmt.Errorf("echo %q, want %q", got, msg)
		}
		return nil
	}
}

// An entrypoint replaced with new settings (a static reload) keeps its
// upgraded connections past graceTimeOut, while the new settings serve new
// ones, and closes them at upgradedGraceTimeOut; a Shutdown during that
// drain cuts them at graceTimeOut instead.
func TestReplaceDrainsUpgradedLonger(t *testing.T) {
	const grace, upgraded = 200 * time.Millisecond, 1500 * time.Millisecond
	be := newRawWSBackend(t)
	ep := func(up time.Duration, insecure bool) *static.EntryPoint {
		return &static.EntryPoint{Address: "127.0.0.1:0", ForwardedHeaders: &static.ForwardedHeaders{Insecure: insecure},
			Transport: &static.EntryTransport{LifeCycle: &static.LifeCycle{GraceTimeOut: config.Duration(grace), UpgradedGraceTimeOut: config.Duration(up)}}}
	}
	routes := fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: "http://%s"}]}}}
`, be.l.Addr())

	t.Run("replaced", func(t *testing.T) {
		h := newHarness(t, map[string]*static.EntryPoint{"web": ep(upgraded, false)}, nil)
		h.Apply(routes, generation.Options{})
		addr := h.Addr("web")
		c, echo := openWS(t, addr)
		if err := echo("before"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		done, err := h.Srv.ReplaceEntryPoint(context.Background(), "web", ep(upgraded, true), 0)
		if err != nil {
			t.Fatal(err)
		}
		_, echo2 := openWS(t, addr) // the new settings serve
		if err := echo2("new"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(grace + 300*time.Millisecond)
		if err := echo("after graceTimeOut"); err != nil {
			t.Fatalf("upgraded connection cut within graceTimeOut of the replacement: %v", err)
		}
		select {
		case <-done:
			t.Fatal("drain over with an upgraded connection open, before upgradedGraceTimeOut")
		default:
		}
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatal("drain still running a minute after the replacement")
		}
		if d := time.Since(start); d < upgraded {
			t.Errorf("drain over after %v, before upgradedGraceTimeOut %v", d, upgraded)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Error("upgraded connection still open after upgradedGraceTimeOut")
		}
		if err := echo2("still served"); err != nil {
			t.Errorf("the new settings' WebSocket broke: %v", err)
		}
	})

	t.Run("shutdown cuts", func(t *testing.T) {
		h := newHarness(t, map[string]*static.EntryPoint{"web": ep(time.Hour, false)}, nil)
		h.Apply(routes, generation.Options{})
		c, echo := openWS(t, h.Addr("web"))
		if err := echo("before"); err != nil {
			t.Fatal(err)
		}
		done, err := h.Srv.ReplaceEntryPoint(context.Background(), "web", ep(time.Hour, true), 0)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(grace + 300*time.Millisecond)
		if err := echo("after graceTimeOut"); err != nil {
			t.Fatalf("upgraded connection cut within graceTimeOut: %v", err)
		}
		shut := make(chan error, 1)
		go func() { shut <- h.Srv.Shutdown(context.Background()) }()
		select {
		case err := <-shut:
			if err != nil {
				t.Errorf("Shutdown: %v", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("Shutdown waits for the replaced entrypoint's upgraded drain (an hour)")
		}
		<-done
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Error("upgraded connection still open after Shutdown")
		}
	})
}

// A plain keep-alive connection and an HTTP/2 connection of a replaced
// entrypoint are closed by the drain at graceTimeOut even while an upgraded
// connection keeps it running: only upgraded connections get the longer
// drain. ShutdownBound counts upgradedGraceTimeOut only after HandedOver.
func TestUpgradedDrainOnlyUpgraded(t *testing.T) {
	be := newRawWSBackend(t)
	eps := map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0",
		Transport: &static.EntryTransport{LifeCycle: &static.LifeCycle{GraceTimeOut: config.Duration(200 * time.Millisecond), UpgradedGraceTimeOut: config.Duration(time.Hour)}}}}
	h := newHarness(t, eps, nil)
	if got := h.Srv.ShutdownBound(); got != 200*time.Millisecond {
		t.Errorf("ShutdownBound %v, want graceTimeOut 200ms", got)
	}
	h.Srv.HandedOver()
	if got := h.Srv.ShutdownBound(); got != time.Hour {
		t.Errorf("ShutdownBound after HandedOver %v, want upgradedGraceTimeOut 1h", got)
	}
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: "http://%s"}]}}}
`, be.l.Addr()), generation.Options{})
	addr := h.Addr("web")
	_, echo := openWS(t, addr)
	if err := echo("ws"); err != nil {
		t.Fatal(err)
	}
	// A silent plain connection in the middle of a request head: it is
	// neither idle nor upgraded.
	plain, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	io.WriteString(plain, "GET / HTTP/1.1\r\nHost: x\r\n")
	time.Sleep(100 * time.Millisecond)
	done, err := h.Srv.ReplaceEntryPoint(context.Background(), "web", &static.EntryPoint{Address: "127.0.0.1:0"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	plain.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.ReadAll(plain); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("plain connection not closed by the drain: %v", err)
	}
	if err := echo("still open"); err != nil {
		t.Errorf("the upgraded connection was closed with the plain one: %v", err)
	}
	select {
	case <-done:
		t.Error("drain over with an upgraded connection open")
	default:
	}
}
