package acme

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// keyPair returns a fresh self-signed PEM certificate and key for name.
func keyPair(t testing.TB, name string) (cert, key []byte, serial *big.Int) {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	serial, _ = rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(k)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), serial
}

func servedSerial(addr, sni string) (*big.Int, error) {
	c, err := tls.Dial("tcp", addr, &tls.Config{ServerName: sni, InsecureSkipVerify: true}) //nolint:gosec // the test compares serials
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber, nil
}

func waitSerial(t *testing.T, addr, sni string, want *big.Int, what string) {
	t.Helper()
	harness.Try(t, 60*time.Second, func() error {
		got, err := servedSerial(addr, sni)
		if err != nil {
			return err
		}
		if got.Cmp(want) != 0 {
			return fmt.Errorf("%s: serving serial %x, want %x", what, got, want)
		}
		return nil
	})
}

// Certificate files of tls.certificates changed on disk are served without
// SIGHUP, whichever way they change: renamed over, rewritten in place, or
// a Kubernetes Secret volume swapping its ..data symlink. A file that no
// longer parses keeps the last good certificate serving and is a problem
// naming the file.
func TestCertificateFilesReload(t *testing.T) {
	dyn, certs := t.TempDir(), t.TempDir()
	write := func(path string, b []byte) {
		t.Helper()
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// rename-over and in-place: plain files.
	c1, k1, s1 := keyPair(t, "plain.test")
	write(filepath.Join(certs, "plain.crt"), c1)
	write(filepath.Join(certs, "plain.key"), k1)
	// Kubernetes: tls.crt -> ..data/tls.crt, ..data -> ..v1
	kube := filepath.Join(certs, "kube")
	kc1, kk1, ks1 := keyPair(t, "kube.test")
	if err := os.MkdirAll(filepath.Join(kube, "..v1"), 0o700); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(kube, "..v1", "tls.crt"), kc1)
	write(filepath.Join(kube, "..v1", "tls.key"), kk1)
	for _, l := range [][2]string{{"..v1", "..data"}, {"..data/tls.crt", "tls.crt"}, {"..data/tls.key", "tls.key"}} {
		if err := os.Symlink(l[0], filepath.Join(kube, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	harness.WriteFile(t, dyn, "tls.yml", fmt.Sprintf(`
tls:
  certificates:
    - certFile: %s
      keyFile: %s
    - certFile: %s
      keyFile: %s
`, filepath.Join(certs, "plain.crt"), filepath.Join(certs, "plain.key"), filepath.Join(kube, "tls.crt"), filepath.Join(kube, "tls.key")))
	apiPort, securePort := freePort(t), freePort(t)
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  websecure: {address: "127.0.0.1:%d"}
  traefik: {address: "127.0.0.1:%d"}
api: {insecure: true}
providers:
  file: {directory: %s}
`, securePort, apiPort, dyn))
	addr := g.EntryPoints["websecure"]
	waitSerial(t, addr, "plain.test", s1, "start")
	waitSerial(t, addr, "kube.test", ks1, "start")

	// Renamed over (key first, then certificate, each atomically).
	c2, k2, s2 := keyPair(t, "plain.test")
	harness.WriteFile(t, certs, "plain.key", string(k2))
	harness.WriteFile(t, certs, "plain.crt", string(c2))
	waitSerial(t, addr, "plain.test", s2, "rename-over")

	// Rewritten in place (same inode).
	c3, k3, s3 := keyPair(t, "plain.test")
	write(filepath.Join(certs, "plain.crt"), c3)
	write(filepath.Join(certs, "plain.key"), k3)
	waitSerial(t, addr, "plain.test", s3, "in place")

	// Kubernetes ..data swap.
	kc2, kk2, ks2 := keyPair(t, "kube.test")
	if err := os.MkdirAll(filepath.Join(kube, "..v2"), 0o700); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(kube, "..v2", "tls.crt"), kc2)
	write(filepath.Join(kube, "..v2", "tls.key"), kk2)
	if err := os.Symlink("..v2", filepath.Join(kube, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(kube, "..data_tmp"), filepath.Join(kube, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(kube, "..v1")); err != nil {
		t.Fatal(err)
	}
	waitSerial(t, addr, "kube.test", ks2, "..data swap")

	// Broken: garbage in the certificate file. The last good pair keeps
	// serving; the problem names the file.
	write(filepath.Join(certs, "plain.crt"), []byte("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n"))
	harness.Try(t, 60*time.Second, func() error {
		var ps []problem
		if err := apiGet(g.EntryPoints["traefik"], "/api/problems", &ps); err != nil {
			return err
		}
		for _, p := range ps {
			if strings.Contains(p.Message, filepath.Join(certs, "plain.crt")) && strings.Contains(p.Message, "keeps serving") {
				return nil
			}
		}
		return fmt.Errorf("no problem naming plain.crt: %+v", ps)
	})
	if got, err := servedSerial(addr, "plain.test"); err != nil || got.Cmp(s3) != 0 {
		t.Errorf("broken file: serving %v (%v), want the last good serial %x", got, err, s3)
	}
	waitSerial(t, addr, "kube.test", ks2, "unaffected")
}
