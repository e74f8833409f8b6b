package tcpudp

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// proxyBackend accepts connections, reads the PROXY v1 line Gantry must
// send first, and writes back "<header>|<rest of the first read>".
func proxyBackend(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				br := bufio.NewReader(c)
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				rest := make([]byte, 256)
				n, _ := br.Read(rest)
				fmt.Fprintf(c, "%s|%s", strings.TrimSpace(line), rest[:n])
			}()
		}
	}()
	return l.Addr().String()
}

func v2Header(src, dst netip.AddrPort) []byte {
	b := []byte{0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A, 0x21, 0x11, 0, 12}
	b = append(b, src.Addr().AsSlice()...)
	b = append(b, dst.Addr().AsSlice()...)
	b = binary.BigEndian.AppendUint16(b, src.Port())
	return binary.BigEndian.AppendUint16(b, dst.Port())
}

// PROXY protocol v1 and v2 from a trusted peer set the client address
// (seen by the server in the v1 header Gantry sends it, and by HTTP in
// X-Forwarded-For); from an untrusted peer the header is read and dropped
// (Traefik's go-proxyproto IGNORE policy): the server gets Gantry's own
// header naming the real peer, then the data, and nothing of the forged
// address.
func TestProxyProtocolTrustedAndUntrusted(t *testing.T) {
	backend := proxyBackend(t)
	w := harness.StartWhoamiProc(t, "w1")
	trusted, untrusted, web := harness.FreeAddr(t), harness.FreeAddr(t), harness.FreeAddr(t)
	eps := fmt.Sprintf(`  trusted:
    address: %q
    proxyProtocol:
      trustedIPs: [127.0.0.1/32]
    transport:
      respondingTimeouts:
        readHeaderTimeout: 1s
  untrusted:
    address: %q
    proxyProtocol:
      trustedIPs: [10.0.0.0/8]
  web:
    address: %q
    proxyProtocol:
      insecure: true`, trusted, untrusted, web)
	_, _ = gantry(t, eps, fmt.Sprintf(`tcp:
  routers:
    pp:
      entryPoints: [trusted, untrusted]
      rule: HostSNI(`+"`*`"+`)
      service: pp
  services:
    pp:
      loadBalancer:
        serversTransport: v1
        servers:
          - address: %q
  serversTransports:
    v1:
      proxyProtocol:
        version: 1
http:
  routers:
    who:
      entryPoints: [web]
      rule: PathPrefix(`+"`/`"+`)
      service: who
  services:
    who:
      loadBalancer:
        servers:
          - url: %q
`, backend, w.URL()))
	exchange := func(addr string, payload []byte) (string, error) {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			return "", err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write(payload); err != nil {
			return "", err
		}
		b, err := io.ReadAll(c)
		return string(b), err
	}
	src := netip.MustParseAddrPort("203.0.113.7:4242")
	dst := netip.MustParseAddrPort("198.51.100.1:443")
	v1 := []byte("PROXY TCP4 203.0.113.7 198.51.100.1 4242 443\r\nhello")
	v2 := append(v2Header(src, dst), "hello"...)
	for _, tc := range []struct {
		name, addr string
		payload    []byte
		want       []string
	}{
		{"trusted v1", trusted, v1, []string{"PROXY TCP4 203.0.113.7 127.0.0.1 4242 ", "|hello"}},
		{"trusted v2", trusted, v2, []string{"PROXY TCP4 203.0.113.7 127.0.0.1 4242 ", "|hello"}},
		{"untrusted v1", untrusted, v1, []string{"PROXY TCP4 127.0.0.1 127.0.0.1 ", "|hello"}},
		{"untrusted v2", untrusted, v2, []string{"PROXY TCP4 127.0.0.1 127.0.0.1 ", "|hello"}},
		{"no header", trusted, []byte("hello"), []string{"PROXY TCP4 127.0.0.1 127.0.0.1 ", "|hello"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			harness.Try(t, poll, func() error {
				got, err := exchange(tc.addr, tc.payload)
				if err != nil {
					return err
				}
				for _, w := range tc.want {
					if !strings.Contains(got, w) {
						return fmt.Errorf("backend saw %q, want it to contain %q", got, w)
					}
				}
				if _, data, _ := strings.Cut(got, "|"); tc.addr == untrusted && data != "hello" {
					return harness.Permanent(fmt.Errorf("backend saw %q after Gantry's header, want only the data (the untrusted peer's header dropped)", data))
				}
				return nil
			})
		})
	}
	t.Run("http v2", func(t *testing.T) {
		req := append(v2Header(src, dst), "GET / HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n"...)
		harness.Try(t, poll, func() error {
			got, err := exchange(web, req)
			if err != nil {
				return err
			}
			if !strings.Contains(got, "X-Forwarded-For: 203.0.113.7") {
				return fmt.Errorf("whoami saw:\n%s", got)
			}
			return nil
		})
	})
	t.Run("header timeout", func(t *testing.T) {
		// A partial header that never completes is cut by the header
		// timeout, not held forever: the read ends (EOF) within it.
		c, err := net.Dial("tcp", trusted)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = c.Write([]byte("PROXY TCP4 203.0.113.7"))
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = c.Read(make([]byte, 1))
		if err == nil || bytes.Contains([]byte(err.Error()), []byte("timeout")) {
			t.Fatalf("partial header: got %v, want the connection closed by gantry", err)
		}
	})
}
