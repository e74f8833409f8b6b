package tcpudp

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// readerConn is a connection whose reads come from r (a bufio.Reader over
// it holding bytes read ahead).
type readerConn struct {
	*net.TCPConn
	r io.Reader
}

func (c readerConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// readProxyHeader reads the PROXY protocol v1 line or v2 header (TCP over
// IPv4) that starts br and returns the source address it names.
func readProxyHeader(br *bufio.Reader) (netip.AddrPort, error) {
	first, err := br.Peek(1)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if first[0] == 'P' {
		line, err := br.ReadString('\n')
		if err != nil {
			return netip.AddrPort{}, err
		}
		f := strings.Fields(line) // PROXY TCP4 src dst sport dport
		if len(f) != 6 || f[0] != "PROXY" || f[1] != "TCP4" {
			return netip.AddrPort{}, fmt.Errorf("PROXY v1 line %q", line)
		}
		return netip.ParseAddrPort(f[2] + ":" + f[4])
	}
	hdr := make([]byte, 16+12)
	if _, err := io.ReadFull(br, hdr); err != nil {
		return netip.AddrPort{}, err
	}
	sig := []byte("\r\n\r\n\x00\r\nQUIT\n")
	if !bytes.Equal(hdr[:12], sig) || hdr[12] != 0x21 || hdr[13] != 0x11 || binary.BigEndian.Uint16(hdr[14:]) != 12 {
		return netip.AddrPort{}, fmt.Errorf("PROXY v2 header % x: want its signature, PROXY, TCP4 and 12 address bytes", hdr)
	}
	src := netip.AddrFrom4([4]byte(hdr[16:20]))
	return netip.AddrPortFrom(src, binary.BigEndian.Uint16(hdr[24:])), nil
}

// The PROXY protocol header (v1 and v2) a serversTransport asks for
// reaches the raw-dialled server first, naming the client, and the bytes
// after it are intact both ways.
func TestTCPAbuseProxyProtocol(t *testing.T) {
	results := make(chan error, 8)
	sources := make(chan netip.AddrPort, 8)
	srv := startBackend(t, "127.0.0.1:0", func(c *net.TCPConn) {
		br := bufio.NewReader(c)
		src, err := readProxyHeader(br)
		if errors.Is(err, io.EOF) {
			return // gantry's readiness probe: no exchange
		}
		if err != nil {
			err = fmt.Errorf("PROXY header: %w", err)
		} else if err = serveStream(readerConn{c, br}); errors.Is(err, errNoExchange) {
			return
		}
		sources <- src
		results <- err
	})
	r := startAbuse(t,
		abuseRoute{name: "v1", server: srv, transport: "{proxyProtocol: {version: 1}}"},
		abuseRoute{name: "v2", server: srv, transport: "{proxyProtocol: {version: 2}}"},
	)
	for i, name := range []string{"v1", "v2"} {
		t.Run(name, func(t *testing.T) {
			c, err := dialGantry(r.ep[name])
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := clientExchange(c, exchange{mode: bothAtOnce, up: 4 << 20, down: 4 << 20, upSeed: uint64(2 * i), downSeed: uint64(2*i + 1)}); err != nil {
				t.Errorf("client: %v", err)
			}
			if err := <-results; err != nil {
				t.Errorf("server: %v", err)
			}
			if src, want := <-sources, c.LocalAddr().(*net.TCPAddr).AddrPort(); src != want {
				t.Errorf("PROXY header names %v, want the client %v", src, want)
			}
		})
	}
}

// selfSigned is a TLS certificate for name, made here.
func selfSigned(t *testing.T, name string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TLS passthrough (HostSNI) to a raw-dialled server: the client sees the
// server's own certificate and the bytes are intact both ways.
func TestTCPAbuseTLSPassthrough(t *testing.T) {
	results := make(chan error, 8)
	cfg := &tls.Config{Certificates: []tls.Certificate{selfSigned(t, "pass.test")}}
	srv := startBackend(t, "127.0.0.1:0", func(c *net.TCPConn) {
		if err := serveStream(tls.Server(c, cfg)); !errors.Is(err, errNoExchange) {
			results <- err
		}
	})
	r := startAbuse(t, abuseRoute{name: "pass", server: srv, rule: "HostSNI(`pass.test`)", passthrough: true})
	c, err := dialGantry(r.ep["pass"])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tc := tls.Client(c, &tls.Config{ServerName: "pass.test", InsecureSkipVerify: true})
	if err := clientExchange(tc, exchange{mode: bothAtOnce, up: 8 << 20, down: 8 << 20, upSeed: 1, downSeed: 2}); err != nil {
		t.Errorf("client: %v", err)
	}
	if err := <-results; err != nil {
		t.Errorf("server: %v", err)
	}
	if cn := tc.ConnectionState().PeerCertificates[0].Subject.CommonName; cn != "pass.test" {
		t.Errorf("certificate of %q, want the server's own (pass.test)", cn)
	}
}
