package kubecrd

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// timeout bounds every wait for a change to reach the data plane: the
// API server's watch, the provider's build and the aggregator's debounce
// take well under a second on an idle machine.
const timeout = 60 * time.Second

// applyCRDs applies the CRDs of examples/kubernetes/crds with kubectl
// (server-side, as large CRDs need), waiting until they are established.
func applyCRDs(t *testing.T, k *harness.Kube) {
	t.Helper()
	k.Kubectl(t, "apply", "--server-side", "-f", "../../examples/kubernetes/crds")
	k.Kubectl(t, "wait", "--for", "condition=established", "--timeout=120s", "crd", "--all")
}

// problem is one entry of /api/problems.
type problem struct {
	Provider, Source, Message, Severity string
	Objects                             []string
}

// problems returns /api/problems of g.
func problems(g *gantry) ([]problem, error) {
	resp, err := http.Get("http://" + g.EntryPoints["traefik"] + "/api/problems")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /api/problems: %s", resp.Status)
	}
	var ps []problem
	return ps, json.NewDecoder(resp.Body).Decode(&ps)
}

// waitProblem waits for a kubernetescrd problem whose Source is src and
// whose message holds every part.
func waitProblem(t *testing.T, g *gantry, src string, parts ...string) {
	t.Helper()
	harness.Try(t, timeout, func() error {
		ps, err := problems(g)
		if err != nil {
			return err
		}
	next:
		for _, p := range ps {
			if p.Provider != "kubernetescrd" || p.Source != src {
				continue
			}
			for _, s := range parts {
				if !strings.Contains(p.Message, s) {
					continue next
				}
			}
			return nil
		}
		return fmt.Errorf("no problem for %s holding %q yet: %+v", src, parts, ps)
	})
}

// gantry is a running gantry and the address of its UDP entrypoint (the
// harness lists TCP entrypoints only).
type gantry struct {
	*harness.Gantry
	UDP string
}

// startGantry runs gantry with providers.kubernetesCRD pointed at k
// (extra lines are more kubernetesCRD options, indented by 4), entrypoints
// web, websecure, tcp, tcp2, udp and the API on traefik.
func startGantry(t *testing.T, k *harness.Kube, extra string) *gantry {
	t.Helper()
	web, secure, tcpEP, tcp2, udpEP, api := harness.FreePort(t), harness.FreePort(t), harness.FreePort(t), harness.FreePort(t), harness.FreePort(t), harness.FreePort(t)
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  web: {address: "127.0.0.1:%d"}
  websecure: {address: "127.0.0.1:%d"}
  tcp: {address: "127.0.0.1:%d"}
  tcp2: {address: "127.0.0.1:%d"}
  udp: {address: "127.0.0.1:%d/udp"}
  traefik: {address: "127.0.0.1:%d"}
api: {insecure: true}
providers:
  providersThrottleDuration: 10ms
  kubernetesCRD:
    endpoint: %s
    token: %s
    certAuthFilePath: %s
%s`, web, secure, tcpEP, tcp2, udpEP, api, k.URL, k.Token, k.CAFile, extra))
	return &gantry{Gantry: g, UDP: fmt.Sprintf("127.0.0.1:%d", udpEP)}
}

// tlsGet does a GET / over TLS (HTTP/1.1) to addr with SNI host, offering
// at most maxVersion (0: any), and returns the status and the serial of
// the certificate served (hex).
func tlsGet(addr, host string, maxVersion uint16) (int, string, error) {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr,
		&tls.Config{ServerName: host, InsecureSkipVerify: true, MaxVersion: maxVersion})
	if err != nil {
		return 0, "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	serial := conn.ConnectionState().PeerCertificates[0].SerialNumber.Text(16)
	req, _ := http.NewRequest(http.MethodGet, "https://"+host+"/", nil)
	if err := req.Write(conn); err != nil {
		return 0, serial, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return 0, serial, err
	}
	resp.Body.Close()
	return resp.StatusCode, serial, nil
}

// serialOf returns the serial (hex) of the first certificate of PEM data.
func serialOf(t *testing.T, certPEM []byte) string {
	t.Helper()
	b, _ := pem.Decode(certPEM)
	if b == nil {
		t.Fatal("no PEM block")
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c.SerialNumber.Text(16)
}
