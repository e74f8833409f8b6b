package balance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// Active health-check defaults (Traefik's).
// Source: https://doc.traefik.io/traefik/routing/services/#health-check
const (
	defaultHealthInterval = 30 * time.Second
	defaultHealthTimeout  = 5 * time.Second
)

// HealthSpec is a ServerHealthCheck resolved to defaults for one server:
// what a Checker sends, how often, and what counts as healthy.
type HealthSpec struct {
	mode              string   // "http" or "grpc"
	url               *url.URL // request URL: scheme, host:port and path of the check
	method            string
	hostname          string
	headers           map[string]string
	status            int // 0: any 2xx or 3xx
	interval          time.Duration
	unhealthyInterval time.Duration
	timeout           time.Duration
	followRedirects   bool
}

// NewHealthSpec resolves hc for the server at origin (scheme://host:port).
// It returns an error naming the field for an unknown mode or a bad path.
func NewHealthSpec(origin *url.URL, hc *config.ServerHealthCheck) (*HealthSpec, error) {
	mode := strings.ToLower(hc.Mode)
	switch mode {
	case "", "http":
		mode = "http"
	case "grpc":
	default:
		return nil, fmt.Errorf("healthCheck.mode %q is not one of http, grpc", hc.Mode)
	}
	u := &url.URL{Scheme: origin.Scheme, Host: origin.Host}
	if u.Scheme == "h2c" {
		u.Scheme = "http"
	}
	if hc.Scheme != "" {
		u.Scheme = hc.Scheme
	}
	if hc.Port > 0 {
		u.Host = net.JoinHostPort(origin.Hostname(), strconv.Itoa(hc.Port))
	}
	p := hc.Path
	if p == "" {
		p = "/"
	}
	pu, err := url.Parse(p)
	if err != nil {
		return nil, fmt.Errorf("healthCheck.path %q: %w", hc.Path, err)
	}
	u.Path, u.RawPath, u.RawQuery = pu.Path, pu.RawPath, pu.RawQuery
	s := &HealthSpec{
		mode:            mode,
		url:             u,
		method:          strings.ToUpper(hc.Method),
		hostname:        hc.Hostname,
		headers:         hc.Headers,
		status:          hc.Status,
		interval:        orDefault(hc.Interval.D(), defaultHealthInterval),
		timeout:         orDefault(hc.Timeout.D(), defaultHealthTimeout),
		followRedirects: hc.FollowRedirects == nil || *hc.FollowRedirects,
	}
	if s.method == "" {
		s.method = http.MethodGet
	}
	s.unhealthyInterval = s.interval
	if hc.UnhealthyInterval != nil && *hc.UnhealthyInterval > 0 {
		s.unhealthyInterval = hc.UnhealthyInterval.D()
	}
	return s, nil
}

// Checker runs one active health check against one server. Servers start
// UP; the first check runs one interval after the Checker starts (Traefik).
// A single success brings a server back, a single failure takes it out.
// The Pool starts, shares and stops checkers (AcquireChecker).
type Checker struct {
	key    string
	origin string
	spec   *HealthSpec
	client *http.Client
	log    *slog.Logger
	notify func() // called after every state change

	up        atomic.Bool
	lastErr   atomic.Pointer[string]
	lastCheck atomic.Int64 // unix ns

	refs   int // guarded by Pool.mu
	cancel context.CancelFunc
	done   chan struct{}
}

// run checks until ctx is done. It is started and joined by the Pool.
func (c *Checker) run(ctx context.Context) {
	defer close(c.done)
	for next := c.spec.interval; providers.Sleep(ctx, next); {
		err := c.check(ctx)
		if ctx.Err() != nil {
			return
		}
		c.lastCheck.Store(time.Now().UnixNano())
		next = c.spec.interval
		if err != nil {
			msg := err.Error()
			c.lastErr.Store(&msg)
			next = c.spec.unhealthyInterval
			if c.up.Swap(false) {
				c.log.Warn("server down", "backend", c.origin, "error", err)
				c.notify()
			}
		} else if !c.up.Swap(true) {
			c.lastErr.Store(nil)
			c.log.Info("server up", "backend", c.origin)
			c.notify()
		}
	}
}

// check sends one health request; nil means healthy: the status is 2xx or
// 3xx, or exactly spec.status when set (case 032).
func (c *Checker) check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.spec.timeout)
	defer cancel()
	if c.spec.mode == "grpc" {
		return c.checkGRPC(ctx)
	}
	req, err := http.NewRequestWithContext(ctx, c.spec.method, c.spec.url.String(), nil)
	if err != nil {
		return fmt.Errorf("health check request: %w", err)
	}
	for k, v := range c.spec.headers {
		req.Header.Set(k, v)
	}
	if c.spec.hostname != "" {
		req.Host = c.spec.hostname
	}
	resp, err := c.client.Do(req)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("health check %s: timeout after %s", c.spec.url, c.spec.timeout)
		}
		return fmt.Errorf("health check %s: %w", c.spec.url, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if c.spec.status != 0 {
		if resp.StatusCode != c.spec.status {
			return fmt.Errorf("health check %s: status %d, want %d", c.spec.url, resp.StatusCode, c.spec.status)
		}
		return nil
	}
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("health check %s: status %d, want 2xx or 3xx", c.spec.url, resp.StatusCode)
	}
	return nil
}

// healthClient returns the HTTP client of a check over transport rt.
func healthClient(rt http.RoundTripper, follow bool) *http.Client {
	c := &http.Client{Transport: rt}
	if !follow {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return c
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
