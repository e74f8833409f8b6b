package observe

import (
	"net/http"
	"strings"
	"time"
)

// RequestEvent describes one finished request, as seen by the per-router
// wrapper (or by the entry handler when no router matched: Router is "").
// Header and ResponseHeader are the live maps: an Observer must read them
// during the call only, never keep them.
type RequestEvent struct {
	Start          time.Time
	Duration       time.Duration
	EntryPoint     string
	Router         string // qualified, "web@docker"; "" when no router matched
	Service        string // qualified; "" when none was reached
	Upstream       string // URL of the server that answered, "" if none
	Method         string
	Host           string
	Path           string // request-target as received: path and query
	Proto          string // "HTTP/1.1", "HTTP/2.0"
	ClientAddr     string // peer "ip:port"
	Status         int    // as sent to the client; 499 when the client went away
	BytesOut       int64  // response body bytes written to the client
	Retries        int
	TLS            bool
	TLSVersion     uint16 // tls.VersionTLS13…; 0 without TLS
	TLSCipher      uint16 // tls.TLS_AES_128_GCM_SHA256…; 0 without TLS
	Header         http.Header
	ResponseHeader http.Header
	// NoAccessLog and NoMetrics are the router's observability.accessLogs
	// and observability.metrics set to false: the access log, respectively
	// the metrics, leave the request out.
	NoAccessLog, NoMetrics bool
	// TraceID and SpanID identify the request's EntryPoint span when the
	// request was traced (zero otherwise): the JSON access log writes them
	// as TraceId and SpanId, as Traefik does.
	TraceID [16]byte
	SpanID  [8]byte
	// Rule is the matched router's rule ("" when none matched): the
	// http.route of the semantic-convention metrics.
	Rule string
	// LocalPort is the port the connection was accepted on (0: unknown).
	LocalPort int
	// Attempts are the tries of the request on servers, in order (a dial
	// retry or a retry middleware's try adds one); the dataplane reuses
	// the slice after the call.
	Attempts []Attempt
	// OriginStatus is what Service answered when a middleware sent the
	// client another status (the errors middleware: a 502 rewritten to
	// 503, or answered with an error page); 0 when the client got the
	// service's own status. Service series and the access log's
	// OriginStatus record it; entrypoint and router series, Status.
	OriginStatus int
	// Calls are the other services a middleware called for the request
	// (the errors middleware's page service), in order, each counted in
	// its own service series; the dataplane reuses the slice after the
	// call.
	Calls []ServiceCall
}

// ServiceCall is one call a middleware made to another service.
type ServiceCall struct {
	Service  string // qualified name
	Status   int    // what the service answered
	Duration time.Duration
	Bytes    int64 // response body bytes it sent
}

// ServiceStatus is the status Service answered (OriginStatus, else Status).
func (ev *RequestEvent) ServiceStatus() int {
	if ev.OriginStatus != 0 {
		return ev.OriginStatus
	}
	return ev.Status
}

// Attempt is one try of a request on one server.
type Attempt struct {
	Upstream string // the server's URL
	Start    time.Time
	Duration time.Duration
	// Status is the server's answer, or the status the failure maps to
	// (502 refused or broken, 504 timeout, 499 the client left) when it
	// sent none.
	Status int
}

// Internal reports whether the request was served by one of Gantry's own
// services (api@internal, prometheus@internal, ping@internal…) or routed by
// an internal router to one. Traefik's addInternals (default false) leaves
// these out of access logs, metrics and traces. An internal router that
// serves no service, the entrypoint redirection
// ("web-to-websecure@internal"), is not internal: the requests it
// redirects are the entrypoint's traffic, counted and logged like any
// router's (issue 26).
func (ev *RequestEvent) Internal() bool {
	return strings.HasSuffix(ev.Service, "@internal") || (strings.HasSuffix(ev.Router, "@internal") && ev.Service != "")
}

// Observer receives request events and connection counts from the
// dataplane: access log, Prometheus metrics and the dashboard's live
// statistics implement it. Methods are called on the request path: they
// must not block and must be safe for concurrent use.
type Observer interface {
	// Request is called once per finished request.
	Request(ev *RequestEvent)
	// Conn is called with +1 when a client connection opens on entryPoint
	// and -1 when it closes (protocol "http" or "https").
	Conn(entryPoint, protocol string, delta int)
}
