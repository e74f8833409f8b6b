package certs

import (
	"crypto/x509"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
)

// ClientConfig carries the server name and the verification switch, trusts
// exactly the CAs given (inline PEM or a file), presents the client
// certificates, and names the bad field and index in its errors.
func TestClientConfig(t *testing.T) {
	caPEM, _ := selfSigned(t, "ca.example")
	certPEM, keyPEM := selfSigned(t, "client.example")
	tc, err := ClientConfig(&config.TLSClientCommon{
		ServerName:         "backend.example",
		InsecureSkipVerify: true,
		RootCAs:            []string{caPEM},
		Certificates:       []config.Certificate{{CertFile: certPEM, KeyFile: keyPEM}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if tc.ServerName != "backend.example" || !tc.InsecureSkipVerify {
		t.Errorf("ServerName %q, InsecureSkipVerify %v; want backend.example, true", tc.ServerName, tc.InsecureSkipVerify)
	}
	want := x509.NewCertPool()
	want.AppendCertsFromPEM([]byte(caPEM))
	if tc.RootCAs == nil || !tc.RootCAs.Equal(want) {
		t.Errorf("RootCAs do not hold exactly the CA given")
	}
	if len(tc.Certificates) != 1 {
		t.Errorf("%d client certificates, want 1", len(tc.Certificates))
	}

	if tc, err := ClientConfig(&config.TLSClientCommon{}); err != nil || tc.RootCAs != nil || tc.Certificates != nil || tc.InsecureSkipVerify {
		t.Errorf("empty: %+v, %v; want the system's roots, no certificate, verification on", tc, err)
	}

	for name, c := range map[string]struct {
		in   config.TLSClientCommon
		want string
	}{
		"unreadable CA": {config.TLSClientCommon{RootCAs: []string{caPEM, "/nonexistent/ca.pem"}}, "rootCAs[1]: read /nonexistent/ca.pem"},
		"no PEM in CA":  {config.TLSClientCommon{RootCAs: []string{"-----BEGIN nothing"}}, "rootCAs[0]: no PEM certificate found"},
		"bad key": {config.TLSClientCommon{Certificates: []config.Certificate{{CertFile: certPEM, KeyFile: keyPEM}, {CertFile: certPEM, KeyFile: "/nonexistent/key.pem"}}},
			"certificates[1]: keyFile: read /nonexistent/key.pem"},
	} {
		if _, err := ClientConfig(&c.in); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one starting %q", name, err, c.want)
		}
	}
}
