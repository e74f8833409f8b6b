package harness

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// PebbleVersion is what scripts/setup/pebble.sh builds.
const PebbleVersion = "2.10.3"

// PebbleDir returns the directory of the pebble and pebble-challtestsrv
// binaries ($GANTRY_PEBBLE_DIR, else the setup script's cache).
func PebbleDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("GANTRY_PEBBLE_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			MissingTool(t, fmt.Sprintf("pebble not built: run scripts/setup/pebble.sh (%v)", err))
		}
		dir = filepath.Join(cache, "gantry", "pebble-"+PebbleVersion)
	}
	for _, b := range []string{"pebble", "pebble-challtestsrv"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			MissingTool(t, fmt.Sprintf("%s not built: run scripts/setup/pebble.sh (looked in %s)", b, dir))
		}
	}
	return dir
}

// Pebble is Let's Encrypt's ACME test server (built by
// scripts/setup/pebble.sh), configured and, after Start, running.
type Pebble struct {
	dir      string // binaries
	work     string // config, certificates
	Port     int    // ACME directory port
	mgmtPort int
	dnsPort  int
	// CAFile is the PEM root of Pebble's own HTTPS listener (give it to
	// Gantry as caCertificates).
	CAFile string
	// Env is Pebble's environment (PEBBLE_* knobs).
	Env []string
	// DNSServer, when set, is the DNS server Pebble resolves with (instead
	// of its pebble-challtestsrv).
	DNSServer string
	proc      *Process
}

// DirectoryURL is the ACME directory.
func (p *Pebble) DirectoryURL() string { return fmt.Sprintf("https://127.0.0.1:%d/dir", p.Port) }

// NewPebble prepares Pebble to validate on httpPort (HTTP-01) and tlsPort
// (TLS-ALPN-01) of 127.0.0.1, issuing certificates valid for validity.
func NewPebble(t testing.TB, httpPort, tlsPort int, validity time.Duration) *Pebble {
	t.Helper()
	p := &Pebble{dir: PebbleDir(t), work: t.TempDir(), Port: FreePort(t), mgmtPort: FreePort(t), dnsPort: FreeDNSPort(t)}
	certFile, keyFile := p.listenerCert(t)
	cfg := map[string]any{"pebble": map[string]any{
		"listenAddress":           fmt.Sprintf("127.0.0.1:%d", p.Port),
		"managementListenAddress": fmt.Sprintf("127.0.0.1:%d", p.mgmtPort),
		"certificate":             certFile,
		"privateKey":              keyFile,
		"httpPort":                httpPort,
		"tlsPort":                 tlsPort,
		"ocspResponderURL":        "",
		"retryAfter":              map[string]int{"authz": 1, "order": 1},
		"keyAlgorithm":            "ecdsa",
		"profiles": map[string]any{"default": map[string]any{
			"description": "test", "validityPeriod": int(validity / time.Second),
		}},
	}}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(p.work, "pebble.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	// 15% of nonces rejected: lego must retry badNonce errors (RFC 8555 §6.5).
	p.Env = []string{"PEBBLE_VA_NOSLEEP=1", "PEBBLE_AUTHZREUSE=0", "PEBBLE_WFE_NONCEREJECT=15"}
	return p
}

// BlockDomains makes Pebble refuse orders for names (its domainBlocklist:
// rejectedIdentifier, an ACME error). Call it before Start.
func (p *Pebble) BlockDomains(t testing.TB, names ...string) {
	t.Helper()
	f := filepath.Join(p.work, "pebble.json")
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["pebble"]["domainBlocklist"] = names
	if b, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// listenerCert writes a CA and a 127.0.0.1/localhost certificate for
// Pebble's HTTPS listener, and sets CAFile.
func (p *Pebble) listenerCert(t testing.TB) (certFile, keyFile string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gantry test pebble listener CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	write := func(name string, blocks ...*pem.Block) string {
		var out []byte
		for _, b := range blocks {
			out = append(out, pem.EncodeToMemory(b)...)
		}
		f := filepath.Join(p.work, name)
		if err := os.WriteFile(f, out, 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	p.CAFile = write("listener-ca.pem", &pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	return write("listener.pem", &pem.Block{Type: "CERTIFICATE", Bytes: der}), write("listener-key.pem", &pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// Start runs pebble-challtestsrv (DNS only: every A query answers
// 127.0.0.1) and Pebble, and waits for the directory.
func (p *Pebble) Start(t testing.TB) {
	t.Helper()
	if p.DNSServer != "" {
		p.startPebble(t, p.DNSServer)
		return
	}
	StartProcess(t, "challtestsrv", p.work, filepath.Join(p.dir, "pebble-challtestsrv"), []string{
		"-dnsserver", fmt.Sprintf("127.0.0.1:%d", p.dnsPort), "-defaultIPv4", "127.0.0.1", "-defaultIPv6", "",
		"-http01", "", "-https01", "", "-tlsalpn01", "", "-doh", "", "-management", fmt.Sprintf("127.0.0.1:%d", FreePort(t)),
	}, nil)
	WaitListening(t, 10*time.Second, fmt.Sprintf("127.0.0.1:%d", p.dnsPort))
	p.startPebble(t, fmt.Sprintf("127.0.0.1:%d", p.dnsPort))
}

// startPebble runs Pebble resolving with dns and waits for its directory.
func (p *Pebble) startPebble(t testing.TB, dns string) {
	t.Helper()
	p.proc = startProcess(t, "pebble", p.work, filepath.Join(p.dir, "pebble"), []string{
		"-config", filepath.Join(p.work, "pebble.json"), "-dnsserver", dns,
	}, p.Env)
	Try(t, 30*time.Second, func() error {
		_, err := p.get("/dir", p.Port)
		return err
	})
}

// Restart stops Pebble and starts it again on the same ports: Pebble keeps
// everything in memory, so the restarted CA has a new root and knows no
// account (an order signed with an old account gets accountDoesNotExist).
func (p *Pebble) Restart(t testing.TB) {
	t.Helper()
	dns := p.DNSServer
	if dns == "" {
		dns = fmt.Sprintf("127.0.0.1:%d", p.dnsPort)
	}
	p.proc.Stop(t)
	p.startPebble(t, dns)
}

// client trusts Pebble's listener.
func (p *Pebble) client() *http.Client {
	pool := x509.NewCertPool()
	b, _ := os.ReadFile(p.CAFile)
	pool.AppendCertsFromPEM(b)
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

func (p *Pebble) get(path string, port int) ([]byte, error) {
	resp, err := p.client().Get("https://127.0.0.1:" + strconv.Itoa(port) + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return b, err
}

// Roots returns the pool of Pebble's issuing root (management /roots/0).
func (p *Pebble) Roots(t testing.TB) *x509.CertPool {
	t.Helper()
	b, err := p.get("/roots/0", p.mgmtPort)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatalf("pebble root: no PEM in %q", b)
	}
	return pool
}

// Issued counts the certificates Pebble issued (from its log).
func (p *Pebble) Issued() int { return p.proc.CountOutput("Issued certificate serial") }
