package middleware

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"
)

func TestPassTLSClientCert(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	notBefore := time.Unix(1700000000, 0)
	notAfter := time.Unix(1800000000, 0)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(4242),
		Subject: pkix.Name{
			Country: []string{"FR"}, Province: []string{"Occitanie"}, Locality: []string{"Toulouse"},
			Organization: []string{"Cheese"}, OrganizationalUnit: []string{"Tasting"}, CommonName: "client.cheese.org",
			ExtraNames: []pkix.AttributeTypeAndValue{{Type: asn1.ObjectIdentifier(oidDomainComponent), Value: "org"}},
		},
		NotBefore: notBefore, NotAfter: notAfter,
		DNSNames: []string{"client.cheese.org"}, EmailAddresses: []string{"a@cheese.org"}, IPAddresses: []net.IP{net.ParseIP("10.0.1.2")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	res := resolverFrom(t, `
http:
  middlewares:
    pem:  {passTLSClientCert: {pem: true}}
    info:
      passTLSClientCert:
        info:
          notAfter: true
          notBefore: true
          sans: true
          serialNumber: true
          subject: {country: true, province: true, locality: true, organization: true, organizationalUnit: true, commonName: true, domainComponent: true}
          issuer: {commonName: true, domainComponent: true}
`)
	be := echoBackend(t).URL
	tlsFront := func(name string) *httptest.Server {
		m, err := res.Middleware(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		s := httptest.NewUnstartedServer(m(proxyTo(be)))
		s.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
		s.StartTLS()
		t.Cleanup(s.Close)
		return s
	}
	get := func(s *httptest.Server, withCert bool) echo {
		tr := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // test server
		if withCert {
			tr.Certificates = []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}
		}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: tr}}
		req, _ := http.NewRequest("GET", s.URL+"/", nil)
		req.Header.Set(headerClientCert, "forged")
		req.Header.Set(headerClientCertInfo, "forged")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return seen(t, string(b))
	}
	pem := tlsFront("pem")
	if got := get(pem, true).Header.Get(headerClientCert); got != base64.StdEncoding.EncodeToString(der) {
		t.Errorf("pem header %q", got)
	}
	if got := get(pem, false).Header.Get(headerClientCert); got != "" {
		t.Errorf("forged header kept without a certificate: %q", got)
	}
	info := tlsFront("info")
	want := `Subject="DC=org,C=FR,ST=Occitanie,L=Toulouse,O=Cheese,OU=Tasting,CN=client.cheese.org";` +
		`Issuer="DC=org,CN=client.cheese.org";SerialNumber="4242";` +
		`NotBefore="` + strconv.FormatInt(notBefore.Unix(), 10) + `";NotAfter="` + strconv.FormatInt(notAfter.Unix(), 10) + `";` +
		`SANs="client.cheese.org,a@cheese.org,10.0.1.2"`
	got := get(info, true).Header.Get(headerClientCertInfo)
	if dec, _ := url.QueryUnescape(got); dec != want {
		t.Errorf("info header\n got %s\nwant %s", dec, want)
	}
}
