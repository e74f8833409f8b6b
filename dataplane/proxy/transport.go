package proxy

import (
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/dataplane/upstream"
)

// Transport defaults: the forwarding timeouts' are config's
// (config.DefaultDialTimeout, ...). Traefik has no response-header timeout;
// Gantry's is finite so a backend that accepts and never answers yields 504
// instead of a hung request (reliability.md §3.4, §8.6).
const (
	defaultMaxIdleConnsPerHost = 200
	// noLimit stands for a forwarding timeout set to 0 (Traefik: no
	// limit) where the clients take 0 as "the default".
	noLimit = 100 * 365 * 24 * time.Hour
)

// Transports holds the upstream transports of the serversTransports in
// use, keyed by their configuration and ref-counted by the generations
// using them, so that a serversTransport that did not change keeps its
// connection pools across configuration swaps. Safe for concurrent use.
type Transports struct {
	def *config.ServersTransport

	mu sync.Mutex
	m  map[string]*sharedTransport
}

// sharedTransport is the upstream Client of a serversTransport (every
// proxied request) and the standard Transport its health checks use.
type sharedTransport struct {
	t      *http.Transport // health checks only
	client *upstream.Client
	refs   int
}

func (s *sharedTransport) closeIdle() {
	s.client.Close()
	s.t.CloseIdleConnections()
}

// NewTransports returns an empty set whose default (for services that
// name no serversTransport) is the static serversTransport st; nil means
// Gantry's defaults (dial 30s, response headers 60s, idle 90s, 200 idle
// connections per host).
func NewTransports(st *static.ServersTransport) *Transports {
	return &Transports{def: staticTransport(st), m: map[string]*sharedTransport{}}
}

// Acquire returns the shared transport for st (nil: the default; h2c for
// h2c:// servers), building it on first use: the upstream Client for
// proxying and the standard Transport for health checks, and the key to
// Release. Errors name the bad field (rootCAs, certificates).
func (ts *Transports) Acquire(st *config.ServersTransport, h2c bool) (*upstream.Client, *http.Transport, string, error) {
	if st == nil {
		st = ts.def
	}
	key := transportKey(st, h2c)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if s := ts.m[key]; s != nil {
		s.refs++
		return s.client, s.t, key, nil
	}
	rt, t, err := newTransport(st, h2c)
	if err != nil {
		return nil, nil, "", err
	}
	ts.m[key] = &sharedTransport{t: t, client: rt, refs: 1}
	return rt, t, key, nil
}

// Release drops a reference; the last one closes idle connections.
func (ts *Transports) Release(key string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	s := ts.m[key]
	if s == nil {
		return
	}
	if s.refs--; s.refs <= 0 {
		delete(ts.m, key)
		s.closeIdle()
	}
}

// Close closes the idle connections of every transport.
func (ts *Transports) Close() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, st := range ts.m {
		st.closeIdle()
	}
}

// staticTransport converts the static serversTransport to the dynamic
// model; nil gives an empty (all defaults) configuration.
func staticTransport(st *static.ServersTransport) *config.ServersTransport {
	if st == nil {
		return &config.ServersTransport{}
	}
	return &config.ServersTransport{
		TLSClientCommon: config.TLSClientCommon{
			InsecureSkipVerify: st.InsecureSkipVerify,
			RootCAs:            st.RootCAs,
		},
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
	o := forwarding(st.ForwardingTimeouts)
	o.MaxIdleConnsPerHost = defaultMaxIdleConnsPerHost
	o.DisableHTTP2 = st.DisableHTTP2
	d := &net.Dialer{Timeout: o.DialTimeout, KeepAlive: 30 * time.Second}
	t = &http.Transport{
		Proxy:                 nil, // a reverse proxy never follows HTTP_PROXY
		DialContext:           d.DialContext,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       o.IdleConnTimeout,
		ResponseHeaderTimeout: o.ResponseHeaderTimeout,
		TLSHandshakeTimeout:   10 * time.Second,
		ForceAttemptHTTP2:     !st.DisableHTTP2,
		HTTP2:                 &http.HTTP2Config{SendPingTimeout: o.ReadIdleTimeout, PingTimeout: o.PingTimeout},
	}
	switch {
	case st.MaxIdleConnsPerHost < 0:
		t.DisableKeepAlives = true
		o.MaxIdleConnsPerHost = -1
	case st.MaxIdleConnsPerHost > 0:
		o.MaxIdleConnsPerHost = st.MaxIdleConnsPerHost
	}
	tc, err := certs.ClientConfig(&st.TLSClientCommon)
	if err != nil {
		return nil, nil, err
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

// forwarding returns the upstream client's timeouts for ft with Traefik's
// meaning: a field left out takes its default (config.Default*), a field
// set to 0 is no limit (noLimit where the client reads 0 as its default).
func forwarding(ft *config.ForwardingTimeouts) upstream.Options {
	if ft == nil {
		ft = &config.ForwardingTimeouts{}
	}
	return upstream.Options{
		DialTimeout:           limit(ft.DialTimeout.Or(config.DefaultDialTimeout)),
		ResponseHeaderTimeout: ft.ResponseHeaderTimeout.Or(config.DefaultResponseHeaderTimeout),
		BodyReadTimeout:       ft.ReadTimeout.Or(config.DefaultBodyReadTimeout),
		IdleConnTimeout:       limit(ft.IdleConnTimeout.Or(config.DefaultIdleConnTimeout)),
		ReadIdleTimeout:       ft.ReadIdleTimeout.Or(0),
		PingTimeout:           ft.PingTimeout.Or(config.DefaultPingTimeout),
	}
}

// limit returns d, or noLimit for 0 (a forwarding timeout set to 0).
func limit(d time.Duration) time.Duration {
	if d <= 0 {
		return noLimit
	}
	return d
}
