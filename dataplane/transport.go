package dataplane

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/dataplane/upstream"
)

// Transport defaults. Traefik has no response-header timeout; Gantry's is
// finite so a backend that accepts and never answers yields 504 instead of a
// hung request (reliability.md §3.4, §8.6).
const (
	defaultDialTimeout           = 30 * time.Second
	defaultResponseHeaderTimeout = 60 * time.Second
	defaultIdleConnTimeout       = 90 * time.Second
	defaultMaxIdleConnsPerHost   = 200
)

// staticTransport converts the static serversTransport to the dynamic
// model; nil gives an empty (all defaults) configuration.
func staticTransport(st *static.ServersTransport) *config.ServersTransport {
	if st == nil {
		return &config.ServersTransport{}
	}
	return &config.ServersTransport{
		InsecureSkipVerify:  st.InsecureSkipVerify,
		RootCAs:             st.RootCAs,
		MaxIdleConnsPerHost: st.MaxIdleConnsPerHost,
		ForwardingTimeouts:  st.ForwardingTimeouts,
	}
}

// transportKey identifies a Transport by its configuration, so a
// serversTransport that did not change keeps its connection pool across
// configuration swaps.
func transportKey(st *config.ServersTransport, h2c bool) string {
	b, _ := json.Marshal(st)
	if h2c {
		return "h2c:" + string(b)
	}
	return "h1:" + string(b)
}

// newTransport builds the shared upstream transports of a serversTransport:
// the Client that proxies every request (package upstream: Gantry's own
// HTTP/1.1 client, used from the request's goroutine, and x/net/http2 for
// h2c:// servers and https servers that negotiate h2), and the standard
// Transport t, which only the active health checks use. h2c makes t speak
// HTTP/2 over cleartext (health checks of h2c:// servers). Errors name the
// bad field (unreadable rootCAs or certificates).
// Source: https://doc.traefik.io/traefik/routing/services/#serverstransport_1
func newTransport(st *config.ServersTransport, h2c bool) (c *upstream.Client, t *http.Transport, err error) {
	ft := config.ForwardingTimeouts{}
	if st.ForwardingTimeouts != nil {
		ft = *st.ForwardingTimeouts
	}
	dial := orDefault(ft.DialTimeout.D(), defaultDialTimeout)
	d := &net.Dialer{Timeout: dial, KeepAlive: 30 * time.Second}
	t = &http.Transport{
		Proxy:                 nil, // a reverse proxy never follows HTTP_PROXY
		DialContext:           d.DialContext,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       orDefault(ft.IdleConnTimeout.D(), defaultIdleConnTimeout),
		ResponseHeaderTimeout: orDefault(ft.ResponseHeaderTimeout.D(), defaultResponseHeaderTimeout),
		TLSHandshakeTimeout:   10 * time.Second,
		ForceAttemptHTTP2:     !st.DisableHTTP2,
	}
	o := upstream.Options{
		DialTimeout:           dial,
		ResponseHeaderTimeout: t.ResponseHeaderTimeout,
		IdleConnTimeout:       t.IdleConnTimeout,
		MaxIdleConnsPerHost:   defaultMaxIdleConnsPerHost,
		DisableHTTP2:          st.DisableHTTP2,
		ReadIdleTimeout:       ft.ReadIdleTimeout.D(),
		PingTimeout:           ft.PingTimeout.D(),
	}
	switch {
	case st.MaxIdleConnsPerHost < 0:
		t.DisableKeepAlives = true
		o.MaxIdleConnsPerHost = -1
	case st.MaxIdleConnsPerHost > 0:
		o.MaxIdleConnsPerHost = st.MaxIdleConnsPerHost
	}
	if ft.ReadIdleTimeout > 0 || ft.PingTimeout > 0 {
		t.HTTP2 = &http.HTTP2Config{SendPingTimeout: ft.ReadIdleTimeout.D(), PingTimeout: ft.PingTimeout.D()}
	}
	tc := &tls.Config{ServerName: st.ServerName, InsecureSkipVerify: st.InsecureSkipVerify} //nolint:gosec // operator's explicit choice
	if len(st.RootCAs) > 0 {
		pool := x509.NewCertPool()
		for i, ca := range st.RootCAs {
			pem, err := certs.PEMOrFile(ca)
			if err != nil {
				return nil, nil, fmt.Errorf("rootCAs[%d]: %w", i, err)
			}
			if !pool.AppendCertsFromPEM(pem) {
				return nil, nil, fmt.Errorf("rootCAs[%d]: no PEM certificate found", i)
			}
		}
		tc.RootCAs = pool
	}
	for i, c := range st.Certificates {
		cert, err := certs.LoadKeyPair(c)
		if err != nil {
			return nil, nil, fmt.Errorf("certificates[%d]: %w", i, err)
		}
		tc.Certificates = append(tc.Certificates, cert)
	}
	t.TLSClientConfig = tc
	o.TLS = tc
	if h2c {
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		t.Protocols = &p
	}
	return upstream.New(o), t, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
