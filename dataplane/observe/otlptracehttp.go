package observe

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gantry-proxy/gantry/config/static"
)

// OTLP/HTTP trace export, as the OpenTelemetry exporter
// (go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp) sends
// it, without its conversion of each span to generated protobuf structs:
// the batch is encoded straight to an ExportTraceServiceRequest
// (appendExportRequest) and POSTed as application/x-protobuf.
const (
	// otlpHTTPTimeout bounds one POST (the exporter's default timeout).
	otlpHTTPTimeout = 10 * time.Second
	// otlpMaxResponse bounds the response body read (bytes).
	otlpMaxResponse = 4 << 20
	// otlpWriteBuffer is the buffer of the connection to the collector
	// (bytes).
	otlpWriteBuffer = 256 << 10
	// A failed POST the collector may accept later (429, 502, 503, 504, a
	// temporary network error) is retried after a back-off growing from
	// otlpRetryInitial by half each time (±50 % jitter) up to
	// otlpRetryMax, or after the response's Retry-After when longer,
	// for at most otlpRetryElapsed in all: the exporter's defaults.
	otlpRetryInitial = 5 * time.Second
	otlpRetryMax     = 30 * time.Second
	otlpRetryElapsed = time.Minute
)

// otlpUserAgent is the User-Agent of the trace export requests.
const otlpUserAgent = "Gantry OTLP trace exporter"

// spanExporter is an sdktrace.SpanExporter that encodes each batch into
// one reused buffer and hands it to post.
type spanExporter struct {
	mu      sync.Mutex // one export at a time: buf and groups are shared
	buf     []byte
	groups  []spanGroup
	post    func(ctx context.Context, body []byte) error
	stopped bool
}

// maxKeptExportBuffer: a buffer that grew past this for a large batch is
// released after its export (bytes).
const maxKeptExportBuffer = 4 << 20

// ExportSpans implements sdktrace.SpanExporter: spans are sent as one
// request; the error is the POST's after its retries.
func (e *spanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return errors.New("otlp trace exporter: shut down")
	}
	e.buf, e.groups = appendExportRequest(e.buf[:0], spans, e.groups)
	err := e.post(ctx, e.buf)
	if cap(e.buf) > maxKeptExportBuffer {
		e.buf = nil
	}
	return err
}

// Shutdown implements sdktrace.SpanExporter: later exports fail.
func (e *spanExporter) Shutdown(context.Context) error {
	e.mu.Lock()
	e.stopped = true
	e.mu.Unlock()
	return nil
}

// otlpHTTPClient POSTs encoded export requests to one OTLP/HTTP endpoint.
type otlpHTTPClient struct {
	client  *http.Client
	url     string
	headers map[string]string
	gzip    bool          // Content-Encoding: gzip
	backoff time.Duration // the first retry's; otlpRetryInitial
}

// newOTLPHTTPTraces is the exporter of tracing.otlp.http (h may be nil):
// its endpoint is the full URL (its path as given, "/" when it has none;
// else env's, else https://localhost:4318/v1/traces), its headers (else
// env's) go with each request, its tls (nil: the system's roots) secures
// https (an http endpoint with tls set is an error, as in the
// OpenTelemetry exporter; without tls, env's CA and client certificate
// files secure an https endpoint); env's timeout and gzip apply. Errors name the
// option.
func newOTLPHTTPTraces(h *static.OTLPHTTP, env traceEnv) (*spanExporter, error) {
	endpoint, headers := env.endpoint, env.headers
	if endpoint == "" {
		endpoint = "https://localhost:4318/v1/traces"
	}
	var tc *tls.Config
	if h != nil {
		if h.Endpoint != "" {
			endpoint = h.Endpoint
		}
		if len(h.Headers) > 0 {
			headers = h.Headers
		}
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("tracing.otlp.http.endpoint: %q is not an http(s) URL", endpoint)
	}
	if h != nil && h.TLS != nil {
		if tc, err = clientTLS(h.TLS); err != nil {
			return nil, fmt.Errorf("tracing.otlp.http.tls: %w", err)
		}
		if u.Scheme == "http" {
			return nil, errors.New("tracing.otlp.http: insecure HTTP endpoint cannot use TLS client configuration")
		}
	} else if env.tls != nil && u.Scheme == "https" {
		if tc, err = clientTLS(env.tls); err != nil {
			return nil, fmt.Errorf("tracing.otlp.http: %s: %w", env.tlsVars, err)
		}
	}
	if u.Path == "" {
		u.Path = "/"
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		TLSClientConfig:       tc,
		// A batch up to this size goes out in one write behind its head
		// (a larger one in 32 KiB writes, each copy through a new buffer,
		// as with the default 4 KiB): 512 of Gantry's spans are about
		// 170 KB.
		WriteBufferSize: otlpWriteBuffer,
	}
	timeout := otlpHTTPTimeout
	if env.timeout > 0 {
		timeout = env.timeout
	}
	c := &otlpHTTPClient{
		client:  &http.Client{Transport: tr, Timeout: timeout},
		url:     (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String(),
		headers: headers,
		gzip:    env.gzip,
		backoff: otlpRetryInitial,
	}
	return &spanExporter{post: c.post}, nil
}

// retryable is a failure worth trying again, after at least wait.
type retryable struct {
	err  error
	wait time.Duration
}

func (r *retryable) Error() string { return "retryable: " + r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

// post sends body, retrying as the exporter does (otlpRetry*) until ctx
// is done or the retry time is spent.
func (c *otlpHTTPClient) post(ctx context.Context, body []byte) error {
	if c.gzip {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		_, _ = zw.Write(body) // a bytes.Buffer does not fail
		_ = zw.Close()
		body = z.Bytes()
	}
	start := time.Now()
	interval := c.backoff
	for {
		err := c.postOnce(ctx, body)
		var r *retryable
		if !errors.As(err, &r) {
			return err
		}
		wait := max(r.wait, interval/2+rand.N(interval))
		interval = min(interval*3/2, otlpRetryMax)
		if time.Since(start)+wait > otlpRetryElapsed {
			return fmt.Errorf("otlp traces: gave up after %s: %w", otlpRetryElapsed, r.err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("otlp traces: %w (after %w)", ctx.Err(), r.err)
		case <-t.C:
		}
	}
}

// postOnce sends body once. A response the collector may answer
// differently later is a *retryable error.
func (c *otlpHTTPClient) postOnce(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("otlp traces: %w", err)
	}
	if c.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	req.Header.Set("User-Agent", otlpUserAgent)
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := c.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && ue.Temporary() {
			return &retryable{err: err}
		}
		return fmt.Errorf("otlp traces: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, otlpMaxResponse))
	if err != nil {
		return fmt.Errorf("otlp traces: reading the response: %w", err)
	}
	switch code := resp.StatusCode; {
	case code >= 200 && code <= 299:
		if resp.Header.Get("Content-Type") == "application/x-protobuf" {
			return partialSuccess(data)
		}
		return nil
	case code == http.StatusTooManyRequests, code == http.StatusBadGateway,
		code == http.StatusServiceUnavailable, code == http.StatusGatewayTimeout:
		return &retryable{err: fmt.Errorf("%s: %s", c.url, resp.Status), wait: retryAfter(resp.Header.Get("Retry-After"))}
	default:
		msg := strings.TrimSpace(string(data))
		if msg == "" {
			msg = "(empty)"
		}
		return fmt.Errorf("otlp traces: failed to send to %s: %s (body: %s)", c.url, resp.Status, msg)
	}
}

// retryAfter is a Retry-After header's wait: seconds or an HTTP date; 0
// when absent or malformed.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil && s >= 0 {
		return time.Duration(min(s, int64(otlpRetryElapsed/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// partialSuccess reports an ExportTraceServiceResponse's partial_success
// (field 1: rejected_spans 1, error_message 2) as an error; nil when the
// response has none or it rejected nothing and says nothing.
func partialSuccess(resp []byte) error {
	ps, ok := field(resp, 1, protowire.BytesType)
	if !ok {
		return nil
	}
	var rejected int64
	if v, ok := field(ps, 1, protowire.VarintType); ok {
		n, _ := protowire.ConsumeVarint(v)
		rejected = int64(n)
	}
	msg, _ := field(ps, 2, protowire.BytesType)
	if rejected == 0 && len(msg) == 0 {
		return nil
	}
	return fmt.Errorf("otlp traces: partial success: %d spans rejected: %s", rejected, msg)
}

// field returns the last value of field num (of wire type typ) in the
// encoded message b: a varint's bytes, or a length-delimited field's
// contents. ok is false when it is absent or b is malformed.
func field(b []byte, num protowire.Number, typ protowire.Type) (v []byte, ok bool) {
	for len(b) > 0 {
		n, t, tl := protowire.ConsumeTag(b)
		if tl < 0 {
			return nil, false
		}
		b = b[tl:]
		vl := protowire.ConsumeFieldValue(n, t, b)
		if vl < 0 {
			return nil, false
		}
		if n == num && t == typ {
			v, ok = b[:vl], true
			if t == protowire.BytesType {
				v, _ = protowire.ConsumeBytes(b[:vl])
			}
		}
		b = b[vl:]
	}
	return v, ok
}
