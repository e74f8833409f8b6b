package consul

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
)

// Defaults shared by both providers.
const (
	// DefaultWaitTime bounds each blocking query when endpointWaitTime is not
	// set. Consul's own default is 5 minutes; Gantry uses 30 s so that a
	// silently dead connection is noticed quickly (case 019).
	DefaultWaitTime = 30 * time.Second
	// requestSlack is added to the wait time (plus Consul's wait/16 jitter)
	// to form the deadline of one HTTP request.
	requestSlack = 10 * time.Second
)

// newClient builds a Consul API client for ep (nil means all defaults). The
// returned duration is the blocking-query wait time. Options that are set
// win; those left empty fall back to consul/api's environment variables
// (CONSUL_HTTP_ADDR, CONSUL_HTTP_TOKEN, CONSUL_HTTP_AUTH, CONSUL_CACERT, …),
// as for the consul CLI, and then to consul/api's defaults (127.0.0.1:8500
// over plain HTTP).
func newClient(ep *static.ConsulEndpoint) (*api.Client, time.Duration, error) {
	if ep == nil {
		ep = &static.ConsulEndpoint{}
	}
	// Not pooled: no idle connections (and their goroutines) outlive Run;
	// a blocking query costs one loopback or LAN connection per wait time.
	cfg := api.DefaultNonPooledConfig()
	if ep.Address != "" {
		cfg.Address = ep.Address
	}
	if ep.Scheme != "" {
		if ep.Scheme != "http" && ep.Scheme != "https" {
			return nil, 0, fmt.Errorf("endpoint scheme %q: want http or https", ep.Scheme)
		}
		cfg.Scheme = ep.Scheme
	}
	if ep.DataCenter != "" {
		cfg.Datacenter = ep.DataCenter
	}
	if ep.Token != "" {
		cfg.Token, cfg.TokenFile = ep.Token, ""
	}
	if ep.HTTPAuth != nil {
		cfg.HttpAuth = &api.HttpBasicAuth{Username: ep.HTTPAuth.Username, Password: ep.HTTPAuth.Password}
	}
	if ep.TLS != nil {
		tc, err := tlsConfig(ep.TLS)
		if err != nil {
			return nil, 0, err
		}
		cfg.TLSConfig = tc
		if ep.Scheme == "" {
			cfg.Scheme = "https"
		}
	}
	wait := DefaultWaitTime
	if ep.EndpointWaitTime > 0 {
		wait = ep.EndpointWaitTime.D()
	}
	cfg.WaitTime = wait
	c, err := api.NewClient(cfg)
	if err != nil {
		return nil, 0, fmt.Errorf("consul client for %s: %w", cfg.Address, err)
	}
	return c, wait, nil
}

// tlsConfig maps Traefik's client TLS block onto Consul's. CA, Cert and Key
// are each a file path or inline PEM, as in Traefik's FileOrContent.
func tlsConfig(t *config.ClientTLS) (api.TLSConfig, error) {
	tc := api.TLSConfig{InsecureSkipVerify: t.InsecureSkipVerify}
	if (t.Cert == "") != (t.Key == "") {
		return tc, fmt.Errorf("endpoint tls: cert and key must be given together")
	}
	for _, f := range []struct {
		name, v string
		file    *string
		pem     *[]byte
	}{
		{"ca", t.CA, &tc.CAFile, &tc.CAPem},
		{"cert", t.Cert, &tc.CertFile, &tc.CertPEM},
		{"key", t.Key, &tc.KeyFile, &tc.KeyPEM},
	} {
		switch {
		case f.v == "":
		case strings.Contains(f.v, "-----BEGIN"):
			*f.pem = []byte(f.v)
		default:
			if _, err := os.Stat(f.v); err != nil {
				return tc, fmt.Errorf("endpoint tls %s: %w", f.name, err)
			}
			*f.file = f.v
		}
	}
	return tc, nil
}

// requestTimeout is the deadline of one blocking request that waits up to
// wait: Consul adds up to wait/16 of jitter, plus slack for the round trip.
func requestTimeout(wait time.Duration) time.Duration {
	return wait + wait/16 + requestSlack
}
