package tcpudp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// stats is routestats.Stats as the API shows it.
type stats struct {
	Open         int64  `json:"open"`
	Total        uint64 `json:"total"`
	BytesIn      uint64 `json:"bytesIn"`
	BytesOut     uint64 `json:"bytesOut"`
	DatagramsIn  uint64 `json:"datagramsIn"`
	DatagramsOut uint64 `json:"datagramsOut"`
}

// apiStats polls GET path until ok accepts its "stats".
func apiStats(t *testing.T, api, path string, ok func(stats) error) {
	t.Helper()
	harness.Try(t, poll, func() error {
		r, err := http.Get("http://" + api + path)
		if err != nil {
			return err
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		var v struct{ Stats *stats }
		if err := json.Unmarshal(b, &v); err != nil || v.Stats == nil {
			return fmt.Errorf("%s: %d %s (no stats: %v)", path, r.StatusCode, b, err)
		}
		if err := ok(*v.Stats); err != nil {
			return fmt.Errorf("%s: %w (%s)", path, err, b)
		}
		return nil
	})
}

// Live per-router counts through the binary, with Debian's redis-server and
// a socat UDP echo: an open TCP connection counts as open, a bulk SET shows
// its bytes while the connection is still open (added per 256 KiB copied),
// and once closed the bytes each way are exactly what the client sent and
// received; the service sums its router. A UDP session counts as open with
// its datagrams and bytes each way.
func TestRouterStatsInAPI(t *testing.T) {
	socat := tool(t, "socat")
	raddr := harness.FreeAddr(t)
	harness.StartRedis(t, raddr, redisSetup)
	uaddr := freeUDP(t)
	start(t, socat, "UDP-RECVFROM:"+port(uaddr)+",bind=127.0.0.1,fork", "EXEC:cat")
	api, tcpEP, udpEP := harness.FreeAddr(t), harness.FreeAddr(t), freeUDP(t)
	eps := fmt.Sprintf("  traefik:\n    address: %q\n  redis:\n    address: %q\n  echo:\n    address: %q\n    udp:\n      timeout: 30s", api, tcpEP, udpEP+"/udp")
	gantry(t, eps, fmt.Sprintf(`tcp:
  routers:
    redis:
      entryPoints: [redis]
      rule: HostSNI(`+"`*`"+`)
      service: redis
  services:
    redis:
      loadBalancer:
        servers:
          - address: %q
udp:
  routers:
    echo:
      entryPoints: [echo]
      service: echo
  services:
    echo:
      loadBalancer:
        servers:
          - address: %q
`, raddr, uaddr), "api:\n  insecure: true")

	var c net.Conn
	harness.Try(t, poll, func() error {
		var err error
		if c, err = net.Dial("tcp", tcpEP); err != nil {
			return err
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c, "PING\r\n"); err != nil {
			c.Close()
			return err
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || line != "+PONG\r\n" {
			c.Close()
			return fmt.Errorf("PING through gantry: %q %v", line, err)
		}
		return nil
	})
	sent, got := uint64(len("PING\r\n")), uint64(len("+PONG\r\n"))
	apiStats(t, api, "/api/tcp/routers/redis@file", func(s stats) error {
		if s.Open != 1 || s.Total < 1 {
			return fmt.Errorf("open %d total %d, want 1 open", s.Open, s.Total)
		}
		return nil
	})
	// A 300 KiB SET: more than one copy chunk, visible before the close.
	val := strings.Repeat("v", 300<<10)
	cmd := fmt.Sprintf("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n%s\r\n", len(val), val)
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, cmd); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "+OK\r\n" {
		t.Fatalf("SET: %q %v", buf, err)
	}
	sent, got = sent+uint64(len(cmd)), got+5
	apiStats(t, api, "/api/tcp/routers/redis@file", func(s stats) error {
		if s.Open != 1 || s.BytesIn < 256<<10 {
			return fmt.Errorf("open %d bytesIn %d, want 1 open and at least one 256 KiB chunk counted", s.Open, s.BytesIn)
		}
		return nil
	})
	c.Close()
	exact := func(s stats) error {
		// Total counts every connection the router took, a try before
		// redis-server listened included.
		if s.Open != 0 || s.Total < 1 || s.BytesIn != sent || s.BytesOut != got {
			return fmt.Errorf("got %+v, want 0 open, %d bytes in, %d out", s, sent, got)
		}
		return nil
	}
	apiStats(t, api, "/api/tcp/routers/redis@file", exact)
	apiStats(t, api, "/api/tcp/services/redis@file", exact)

	u, err := net.Dial("udp", udpEP)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	rb := make([]byte, 64)
	for _, d := range []string{"a", "bb"} {
		harness.Try(t, poll, func() error {
			// A resend would count a datagram more: give the echo time.
			_ = u.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := u.Write([]byte(d)); err != nil {
				return err
			}
			n, err := u.Read(rb)
			if err != nil || string(rb[:n]) != d {
				return fmt.Errorf("udp echo: %q %v", rb[:n], err)
			}
			return nil
		})
	}
	for _, path := range []string{"/api/udp/routers/echo@file", "/api/udp/services/echo@file"} {
		apiStats(t, api, path, func(s stats) error {
			if s.Open != 1 || s.Total != 1 || s.DatagramsIn != 2 || s.DatagramsOut != 2 || s.BytesIn != 3 || s.BytesOut != 3 {
				return fmt.Errorf("got %+v, want 1 session, 2 datagrams and 3 bytes each way", s)
			}
			return nil
		})
	}
}
