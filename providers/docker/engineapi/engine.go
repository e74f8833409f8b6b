// Package engineapi is a small client of the Docker Engine API over net/http:
// the read calls of Gantry's Docker provider (ping with API version
// negotiation, list and inspect containers, the event stream) decoded into
// structs holding only the fields Gantry reads.
//
// Endpoints: unix:///path/to/socket, tcp://host:port[/base],
// http://host:port[/base], https://host:port[/base] and
// ssh://[user@]host[:port][/path/to/socket] (through ssh(1) and the remote
// `docker system dial-stdio`, as Docker's CLI and Traefik). Every error names
// the endpoint and the call; every response is read under a size limit
// (32 MiB per object, 256 MiB per container list), so a
// broken or hostile engine cannot make Gantry allocate without bound.
//
// Source: https://docs.docker.com/reference/api/engine/
package engineapi

import (
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Versions of the API: the newest this client speaks (Docker 28.5's) and
// the one assumed when /_ping carries no API-Version header (the last
// version before versioning headers existed), as the official client does.
const (
	MaxAPIVersion   = "1.51"
	fallbackVersion = "1.24"
)

// Limits on what the engine sends (variables for the tests). One inspect
// response, one list entry and one event may take maxObjectBytes of JSON
// (32 MiB: twice label.MaxTotalBytes, as a container's labels come with
// each of them); a container list maxListBytes (256 MiB) and
// maxContainers entries (65 536); an error response is read up to
// maxErrorBytes.
var (
	maxObjectBytes int64 = 32 << 20
	maxListBytes   int64 = 256 << 20
	maxContainers        = 1 << 16
)

const maxErrorBytes = 64 << 10

// callTimeout bounds each ping, list and inspect, body included, whatever
// Options.Timeout says (which bounds every request, the event stream too,
// and is none by default): an engine that accepts the connection and then
// answers nothing, or a byte a second, makes the call an error after a
// minute instead of leaving the provider "starting" with nothing said.
// A variable for the tests.
var callTimeout = time.Minute

// dummyHost is the Host of requests over a unix socket (the official
// client's).
const dummyHost = "api.moby.localhost"

// ErrNotFound is matched (errors.Is) by a 404 answer: no such container.
var ErrNotFound = errors.New("not found")

// Options configure a Client.
type Options struct {
	// Endpoint is the engine's address (see the package documentation).
	Endpoint string
	// Headers are sent with every request (User-Agent, Authorization).
	Headers map[string]string
	// TLS, when set, makes the client speak HTTPS (over the socket for
	// unix://); https:// endpoints without it use Go's defaults.
	TLS *tls.Config
	// Timeout bounds each whole request, body included (the event stream
	// too), as the official client's WithTimeout; 0 is none.
	Timeout time.Duration
}

// Client calls one engine. It is safe for concurrent use. Create it with
// New; Close ends its event streams.
type Client struct {
	endpoint string
	scheme   string // http or https
	host     string // URL host of requests
	basePath string // path prefix of tcp:// and http(s):// endpoints
	headers  http.Header
	http     *http.Client
	tr       *http.Transport

	mu      sync.Mutex
	version string // negotiated API version; "" until a ping succeeded

	closing context.Context
	close   context.CancelFunc
	streams sync.WaitGroup
}

// ParseEndpoint splits a Docker endpoint as the official client does,
// "proto://addr": Scheme is the protocol, Host the socket path (unix) or
// host:port, Path the base path of a tcp:// or http(s):// endpoint (an
// ssh:// endpoint keeps its user, host, port and socket path). It fails on
// another protocol (npipe://: Windows named pipes).
func ParseEndpoint(endpoint string) (*url.URL, error) {
	proto, addr, ok := strings.Cut(endpoint, "://")
	if !ok || addr == "" {
		return nil, fmt.Errorf("docker host %q: want unix:///path/to/socket or tcp://host:port", endpoint)
	}
	switch proto {
	case "unix":
		return &url.URL{Scheme: proto, Host: addr}, nil
	case "tcp", "http", "https":
		u, err := url.Parse("tcp://" + addr)
		if err != nil {
			return nil, fmt.Errorf("docker host %q: %w", endpoint, err)
		}
		return &url.URL{Scheme: proto, Host: u.Host, Path: u.Path}, nil
	case "ssh":
		return parseSSH(endpoint)
	}
	return nil, fmt.Errorf("docker host %q: scheme %q not supported (want unix, tcp, http, https or ssh)", endpoint, proto)
}

// New returns a client of o.Endpoint; it does not connect. It fails when
// the endpoint does not parse (ParseEndpoint).
func New(o Options) (*Client, error) {
	u, err := ParseEndpoint(o.Endpoint)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		TLSClientConfig:     o.TLS,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	c := &Client{endpoint: o.Endpoint, scheme: "http", host: u.Host, basePath: strings.TrimSuffix(u.Path, "/"), tr: tr}
	dialer := &net.Dialer{Timeout: 30 * time.Second}
	switch u.Scheme {
	case "unix":
		socket := u.Host
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "unix", socket)
		}
		c.host = dummyHost
	case "ssh":
		args := sshArgs(u)
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) { return dialSSH(ctx, args) }
		c.host, c.basePath = dummyHost, ""
	default: // tcp, http, https
		tr.Proxy = http.ProxyFromEnvironment
		tr.DialContext = dialer.DialContext
	}
	if o.TLS != nil || u.Scheme == "https" {
		c.scheme = "https"
	}
	c.headers = make(http.Header, len(o.Headers))
	for k, v := range o.Headers {
		c.headers.Set(k, v)
	}
	// A redirect is answered as it came (an error status): the engine API
	// has none, and headers carry credentials.
	c.http = &http.Client{Transport: tr, Timeout: o.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	c.closing, c.close = context.WithCancel(context.Background())
	return c, nil
}

// Close ends the client's event streams, waits for their goroutines and
// closes idle connections. It returns nil.
func (c *Client) Close() error {
	c.close()
	c.streams.Wait()
	c.tr.CloseIdleConnections()
	return nil
}

// Version returns the negotiated API version, "" before a successful Ping.
func (c *Client) Version() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// Ping is what GET /_ping tells.
type Ping struct {
	// APIVersion is the engine's API-Version header ("" when absent).
	APIVersion string
}

// Ping calls GET /_ping and negotiates the API version of later calls:
// the lower of the engine's API-Version and MaxAPIVersion, 1.24 when the
// header is absent. An API-Version that is not MAJOR.MINOR is an error.
func (c *Client) Ping(ctx context.Context) (Ping, error) {
	const call = "ping"
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := c.do(ctx, call, "/_ping", nil)
	if err != nil {
		return Ping{}, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBytes))
	p := Ping{APIVersion: resp.Header.Get("API-Version")}
	v := p.APIVersion
	if v == "" {
		v = fallbackVersion
	}
	if _, _, ok := parseVersion(v); !ok {
		return p, c.fail(call, "/_ping", fmt.Errorf("API-Version header %.40q is not MAJOR.MINOR", v))
	}
	if compareVersions(v, MaxAPIVersion) > 0 {
		v = MaxAPIVersion
	}
	c.mu.Lock()
	c.version = v
	c.mu.Unlock()
	return p, nil
}

// apiPath returns p under the negotiated version, pinging first when no
// ping succeeded yet.
func (c *Client) apiPath(ctx context.Context, p string) (string, error) {
	v := c.Version()
	if v == "" {
		if _, err := c.Ping(ctx); err != nil {
			return "", err
		}
		v = c.Version()
	}
	return "/v" + v + p, nil
}

// do sends GET path (with query) and returns a 2xx response; any other
// status is an error (a *StatusError) naming the call.
func (c *Client) do(ctx context.Context, call, path string, query url.Values) (*http.Response, error) {
	u := url.URL{Scheme: c.scheme, Host: c.host, Path: c.basePath + path}
	if query != nil {
		u.RawQuery = query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, c.fail(call, path, err)
	}
	for k, vs := range c.headers {
		req.Header[k] = vs
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			err = fmt.Errorf("cannot connect to the Docker daemon: %w", err)
		}
		return nil, c.fail(call, path, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, c.fail(call, path, statusError(resp))
}

// fail wraps err with the endpoint and the call.
func (c *Client) fail(call, path string, err error) error {
	return fmt.Errorf("docker engine %s: %s (GET %s): %w", c.endpoint, call, path, err)
}

// StatusError is an answer with a status other than 2xx.
type StatusError struct {
	Status  int
	Message string // the engine's message, at most maxErrorBytes of it
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("status %d %s", e.Status, http.StatusText(e.Status))
	}
	return fmt.Sprintf("status %d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
}

// Is makes a 404 match ErrNotFound.
func (e *StatusError) Is(target error) bool {
	return target == ErrNotFound && e.Status == http.StatusNotFound
}

// statusError reads the engine's message: {"message": "..."} or the text.
func statusError(resp *http.Response) *StatusError {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	e := &StatusError{Status: resp.StatusCode, Message: strings.TrimSpace(string(b))}
	var m struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &m) == nil && m.Message != "" {
		e.Message = strings.TrimSpace(m.Message)
	}
	return e
}

// parseVersion splits "MAJOR.MINOR".
func parseVersion(v string) (major, minor int, ok bool) {
	a, b, found := strings.Cut(v, ".")
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	if !found || err1 != nil || err2 != nil || x < 0 || y < 0 || len(v) > 12 {
		return 0, 0, false
	}
	return x, y, true
}

// compareVersions orders two MAJOR.MINOR versions (-1, 0, +1).
func compareVersions(a, b string) int {
	ax, ay, _ := parseVersion(a)
	bx, by, _ := parseVersion(b)
	return cmp.Or(cmp.Compare(ax, bx), cmp.Compare(ay, by))
}
