package ingress

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// servedCert returns the leaf certificate gantry presents at addr for SNI name.
func servedCert(addr, name string) (*x509.Certificate, error) {
	c, err := tls.DialWithDialer(&netDialer, "tcp", addr, &tls.Config{ServerName: name, InsecureSkipVerify: true})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0], nil
}

var netDialer = net.Dialer{Timeout: 5 * time.Second}

// TestTLSSecretReloadAndBadObjects: a TLS Secret named by spec.tls is
// served for its host on a router.tls Ingress, and a change of the Secret
// is served without restart. Bad objects (an annotation that does not
// parse, a missing Secret, a missing Service) are problems naming the
// Ingress and the field, and leave the rest of the cluster served.
func TestTLSSecretReloadAndBadObjects(t *testing.T) {
	k := harness.StartKube(t)
	backend(t, k, "default", "web", "web", harness.PodIP(t, 1))
	crt1, key1 := k.TestCert(t, "secure.test")
	k.WriteTLSSecret(t, "default", "site-tls", crt1, key1)
	g := startGantry(t, k)
	k.Apply(t, `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: secure
  annotations:
    traefik.ingress.kubernetes.io/router.entrypoints: websecure
    traefik.ingress.kubernetes.io/router.tls: "true"
spec:
  tls:
  - hosts: [secure.test]
    secretName: site-tls
  rules:
  - host: secure.test
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: web
            port:
              number: 80
`+ing("badann", "default", "  annotations: {traefik.ingress.kubernetes.io/router.priority: high}\n", "", "bad.test", "/", "Prefix", "web")+
		ing("nosvc", "default", "", "", "nosvc.test", "/", "Prefix", "missing")+
		ing("good", "default", "", "", "good.test", "/", "Prefix", "web")+`---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: nosecret, namespace: default}
spec:
  tls: [{secretName: absent}]
  rules: [{host: nosecret.test, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
`)
	wantCert := func(pemCert []byte) {
		t.Helper()
		b, _ := pem.Decode(pemCert)
		harness.Try(t, timeout, func() error {
			c, err := servedCert(g.EntryPoints["websecure"], "secure.test")
			if err != nil {
				return err
			}
			if !bytes.Equal(c.Raw, b.Bytes) {
				return fmt.Errorf("served certificate serial %s is not the Secret's", c.SerialNumber)
			}
			return nil
		})
	}
	wantCert(crt1)
	r := harness.TryGet(t, timeout, "https://"+g.EntryPoints["websecure"]+"/", harness.Host("secure.test"), harness.StatusIs(200))
	if r.TLS == nil {
		t.Fatal("not TLS")
	}
	crt2, key2 := k.TestCert(t, "secure.test")
	k.WriteTLSSecret(t, "default", "site-tls", crt2, key2)
	wantCert(crt2)

	p := waitProblem(t, g, "Ingress default/badann metadata.annotations", "annotation traefik.ingress.kubernetes.io/router.priority")
	if p.Severity != "error" {
		t.Errorf("bad annotation severity %q", p.Severity)
	}
	waitProblem(t, g, "Ingress default/nosvc spec.rules[0].http.paths[0].backend.service", "service default/missing not found")
	waitProblem(t, g, "Ingress default/nosecret spec.tls[0].secretName", "secret default/absent not found")
	harness.TryGet(t, timeout, g.URL(t, "web", "/"), harness.Host("bad.test"), harness.StatusIs(404))
	harness.TryGet(t, timeout, g.URL(t, "web", "/"), harness.Host("nosvc.test"), harness.StatusIs(404))
	harness.TryGet(t, timeout, g.URL(t, "web", "/"), harness.Host("good.test"), harness.StatusIs(200))
	harness.TryGet(t, timeout, g.URL(t, "web", "/"), harness.Host("nosecret.test"), harness.StatusIs(200))

	// Fixing the object clears its problem and serves it.
	k.Kubectl(t, "annotate", "--overwrite", "ingress", "badann", "traefik.ingress.kubernetes.io/router.priority=10")
	harness.TryGet(t, timeout, g.URL(t, "web", "/"), harness.Host("bad.test"), harness.StatusIs(200))
	noProblem(t, g, "default/badann")
}
