package docker

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// The Traefik + Let's Encrypt setup most users run, against Pebble: a
// resolver in the static configuration (as the compose file's flags) and a
// container whose traefik.* labels name it in tls.certresolver. Gantry
// (here a host process watching the test engine) orders the certificate
// over HTTP-01 and serves the container on https with it, verified against
// Pebble's root by a real client.
func TestLabelsCertResolverPebble(t *testing.T) {
	e := getEnv(t)
	web, secure := harness.FreePort(t), harness.FreePort(t)
	pb := harness.NewPebble(t, web, secure, time.Hour)
	pb.Start(t)
	roots := pb.Roots(t)
	e.run(t, &whoami{name: "le-app", labels: map[string]string{
		"traefik.enable":                            "true",
		"traefik.http.routers.app.rule":             "Host(`app.docker.test`)",
		"traefik.http.routers.app.entrypoints":      "websecure",
		"traefik.http.routers.app.tls.certresolver": "le",
	}})
	harness.StartWith(t, harness.Options{Args: []string{
		fmt.Sprintf("--entrypoints.web.address=127.0.0.1:%d", web),
		"--entrypoints.web.http.redirections.entrypoint.to=websecure",
		fmt.Sprintf("--entrypoints.websecure.address=127.0.0.1:%d", secure),
		"--providers.docker.endpoint=" + e.eng.host(),
		"--providers.docker.exposedbydefault=false",
		"--certificatesresolvers.le.acme.email=ops@example.com",
		"--certificatesresolvers.le.acme.storage=/letsencrypt/acme.json",
		"--certificatesresolvers.le.acme.httpchallenge.entrypoint=web",
		"--certificatesresolvers.le.acme.caserver=" + pb.DirectoryURL(),
		"--certificatesresolvers.le.acme.cacertificates=" + pb.CAFile,
	}, NoWait: true})
	addr := fmt.Sprintf("127.0.0.1:%d", secure)
	harness.WaitListening(t, 30*time.Second, addr)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}}
	harness.Try(t, 120*time.Second, func() error {
		resp, err := client.Get("https://app.docker.test/")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "Name: le-app") {
			return fmt.Errorf("got %d %q", resp.StatusCode, b)
		}
		return nil
	})
	if n := pb.Issued(); n != 1 {
		t.Errorf("Pebble issued %d certificates, want 1", n)
	}
}
