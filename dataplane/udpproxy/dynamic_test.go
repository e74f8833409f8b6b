package udpproxy

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
)

// roundTrip sends msg to addr and returns the answer ("" on timeout).
func roundTrip(t *testing.T, addr, msg string) string {
	t.Helper()
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(msg)); err != nil {
		return ""
	}
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 512)
	n, err := c.Read(buf)
	if err != nil {
		return ""
	}
	return string(buf[:n])
}

// A UDP entrypoint added to a running Server relays through its router;
// replaced on its own address it keeps answering on the same socket;
// moved to another address the old port is freed; removed, its port is
// free at once; a duplicate name, a TCP address and a busy port are
// refused by name.
func TestAddReplaceRemoveUDPEntryPoint(t *testing.T) {
	backend := echo(t)
	c := config.New()
	uc := c.EnsureUDP()
	uc.Routers["dns@file"] = &config.UDPRouter{Service: "u@file", EntryPoints: []string{"dns"}}
	uc.Services["u@file"] = &config.UDPService{LoadBalancer: &config.UDPServersLoadBalancer{Servers: []config.UDPServer{{Address: backend}}}}
	active := router.NewActive()
	active.Swap(router.Compile(context.Background(), &providers.Merged{Config: c}, builder{addr: backend},
		router.Options{EntryPoints: []router.EntryPoint{{Name: "dns", UDP: true}}}))
	s := NewServer(slog.New(slog.DiscardHandler), active, nil)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })

	if err := s.AddEntryPoint(context.Background(), "dns", &static.EntryPoint{Address: "127.0.0.1:0/udp"}); err != nil {
		t.Fatal(err)
	}
	addr := s.Addr("dns").String()
	if got := roundTrip(t, addr, "one"); got != "one" {
		t.Fatalf("through the added entrypoint: %q", got)
	}
	if err := s.AddEntryPoint(context.Background(), "dns", &static.EntryPoint{Address: "127.0.0.1:0/udp"}); err == nil || !strings.Contains(err.Error(), "entrypoint dns: already served") {
		t.Errorf("duplicate: %v", err)
	}
	if err := s.AddEntryPoint(context.Background(), "x", &static.EntryPoint{Address: "127.0.0.1:0"}); err == nil || !strings.Contains(err.Error(), "not a UDP address") {
		t.Errorf("TCP address: %v", err)
	}
	if err := s.AddEntryPoint(context.Background(), "busy", &static.EntryPoint{Address: addr + "/udp"}); err == nil || !strings.Contains(err.Error(), "entrypoint busy: listen on "+addr) {
		t.Errorf("busy port: %v", err)
	}

	// Same address, new settings: the same socket answers.
	if _, err := s.ReplaceEntryPoint(context.Background(), "dns", &static.EntryPoint{Address: addr + "/udp", UDP: &static.EntryUDP{Timeout: config.Duration(5 * time.Second)}}, 0); err != nil {
		t.Fatal(err)
	}
	if got := roundTrip(t, addr, "two"); got != "two" {
		t.Errorf("after replacing on the same address: %q", got)
	}
	// Another address: bound first, the old port freed.
	free, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freeAddr := free.LocalAddr().String()
	free.Close()
	if _, err := s.ReplaceEntryPoint(context.Background(), "dns", &static.EntryPoint{Address: freeAddr + "/udp"}, 0); err != nil {
		t.Fatal(err)
	}
	moved := s.Addr("dns").String()
	if moved == addr || roundTrip(t, moved, "three") != "three" {
		t.Errorf("after moving to %s: no answer", moved)
	}
	if pc, err := net.ListenPacket("udp", addr); err != nil {
		t.Errorf("old port not freed: %v", err)
	} else {
		pc.Close()
	}

	if _, err := s.RemoveEntryPoint("dns", time.Second); err != nil {
		t.Fatal(err)
	}
	if s.Addr("dns") != nil {
		t.Error("Addr after removal")
	}
	pc, err := net.ListenPacket("udp", moved)
	if err != nil {
		t.Fatalf("port not freed by RemoveEntryPoint: %v", err)
	}
	pc.Close()
	if _, err := s.RemoveEntryPoint("dns", time.Second); err == nil || !strings.Contains(err.Error(), "not served") {
		t.Errorf("second removal: %v", err)
	}
}
