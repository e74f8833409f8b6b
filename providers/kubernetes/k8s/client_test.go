package k8s

import (
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config/static"
)

func TestRESTConfig(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	ca := filepath.Join(dir, "ca.crt")
	os.WriteFile(tok, []byte("sa-token\n"), 0o600)
	os.WriteFile(ca, []byte("ca"), 0o600)
	t.Setenv("KUBECONFIG", "")

	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := RESTConfig(ClientOptions{}); err == nil || !strings.Contains(err.Error(), "endpoint: required") {
		t.Errorf("no options outside a pod: %v", err)
	}
	c, err := RESTConfig(ClientOptions{KubernetesAPI: static.KubernetesAPI{Endpoint: "https://10.0.0.1:6443", Token: tok, CertAuthFilePath: ca}})
	if err != nil || c.Host != "https://10.0.0.1:6443" || c.BearerToken != "sa-token" || string(c.CAData) != "ca" {
		t.Errorf("external: %+v %v", c, err)
	}
	if c, _ := RESTConfig(ClientOptions{KubernetesAPI: static.KubernetesAPI{Endpoint: "https://h:1", Token: "literal"}}); c.BearerToken != "literal" {
		t.Errorf("literal token: %q", c.BearerToken)
	}
	if _, err := RESTConfig(ClientOptions{KubernetesAPI: static.KubernetesAPI{Endpoint: "https://h:1", CertAuthFilePath: filepath.Join(dir, "nope")}}); err == nil || !strings.Contains(err.Error(), "certAuthFilePath") {
		t.Errorf("missing CA: %v", err)
	}
	if _, err := RESTConfig(ClientOptions{KubernetesAPI: static.KubernetesAPI{Endpoint: "ftp://x"}}); err == nil || !strings.Contains(err.Error(), "endpoint") {
		t.Errorf("bad endpoint: %v", err)
	}

	// In a pod: no options at all.
	oldTok, oldCA := inClusterTokenFile, inClusterCAFile
	inClusterTokenFile, inClusterCAFile = tok, ca
	t.Cleanup(func() { inClusterTokenFile, inClusterCAFile = oldTok, oldCA })
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
	t.Setenv("KUBERNETES_SERVICE_PORT", "443")
	c, err = RESTConfig(ClientOptions{})
	if err != nil || c.Host != "https://10.96.0.1:443" || c.BearerToken != "sa-token" || c.CAFile != ca {
		t.Errorf("in-cluster: %+v %v", c, err)
	}
	c, _ = RESTConfig(ClientOptions{KubernetesAPI: static.KubernetesAPI{Endpoint: "https://api.internal:6443"}})
	if c.Host != "https://api.internal:6443" {
		t.Errorf("in-cluster endpoint override: %s", c.Host)
	}
	inClusterTokenFile = filepath.Join(dir, "absent")
	if _, err := RESTConfig(ClientOptions{}); err == nil || !strings.Contains(err.Error(), "service account token") {
		t.Errorf("in-cluster without token: %v", err)
	}
}

func TestHealth(t *testing.T) {
	h := newHealth("https://api:6443")
	req := func(method, path string) *http.Request {
		return &http.Request{Method: method, URL: &url.URL{Path: path}, Header: http.Header{}}
	}
	r := req("GET", "/apis/networking.k8s.io/v1/ingresses")
	h.observe(r, nil, errors.New("dial tcp: connection refused"))
	ps := h.Problems("kubernetes")
	if len(ps) != 1 || !strings.Contains(ps[0].Message, "unreachable since") || !strings.Contains(ps[0].Source, "https://api:6443") {
		t.Fatalf("outage: %+v", ps)
	}
	select {
	case <-h.Changed():
	default:
		t.Error("no change signalled for the outage")
	}
	h.observe(r, &http.Response{StatusCode: 403, Status: "403 Forbidden"}, nil)
	ps = h.Problems("kubernetes")
	if len(ps) != 1 || !strings.Contains(ps[0].Source, "GET /apis/networking.k8s.io/v1/ingresses") || !strings.Contains(ps[0].Message, "403") {
		t.Fatalf("forbidden: %+v", ps)
	}
	h.observe(r, &http.Response{StatusCode: 200}, nil)
	if ps := h.Problems("kubernetes"); len(ps) != 0 {
		t.Fatalf("after success: %+v", ps)
	}
	h.observe(r, &http.Response{StatusCode: 503, Status: "503 Service Unavailable"}, nil)
	if !h.Down() {
		t.Error("503 is an outage")
	}
}
