package proxy

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/dataplane/upstream"
)

// Exchange is one request's record from the router chain to the end, and
// the one ResponseWriter wrapper on the request path: it records the
// status and body bytes sent to the client, which the observer (access
// log, metrics, live statistics) reads instead of wrapping again.
//
// Lifecycle: the observer layer of a router chain (the dataplane's
// observeHandler) takes one from a sync.Pool (GetExchange) when the
// request enters the chain and puts it back (PutExchange) when the chain
// returns; when a router is not observed, the load balancer takes one
// itself for the forwarding scratch space. An unrouted request is recorded
// in an Exchange of its own (&Exchange{ResponseWriter: w}). Inner
// layers find it in the ResponseWriter chain (exchangeOf), never through
// the request's context, so carrying it costs no allocation. An exchange
// must not be used after the handler that took it returned.
//
// Per forwarding attempt (lbHandler.attempt): the picked target's begin(),
// then a deferred done(), which runs even when the response is aborted
// with panic(http.ErrAbortHandler), and feeds in-flight counts, passive
// health, leasttime's TTFB and the record here.
type Exchange struct {
	http.ResponseWriter // the client's writer; nil when used as scratch only

	status int   // final status sent to the client; 0 until sent
	bytes  int64 // response body bytes accepted by the client's writer

	// Filled by the load balancer.
	upstream string        // URL of the last server tried
	retries  int           // servers tried after the first
	ttfb     time.Duration // the last attempt's time to the backend's first response head
	out      upstream.Outbound
	attempts []observe.Attempt     // each try on a server, for the observers (backing array reused)
	origin   int                   // the router service's status when a middleware replaced it; 0: none
	calls    []observe.ServiceCall // other services a middleware called (backing array reused)
	trace    *observe.Trace        // the request's spans; nil when not traced
	ev       observe.RequestEvent  // the observer's event, reported before the exchange is recycled
}

var exchanges = sync.Pool{New: func() any { return new(Exchange) }}

// GetExchange returns a clean exchange wrapping w (nil: scratch only).
func GetExchange(w http.ResponseWriter) *Exchange {
	ex := exchanges.Get().(*Exchange)
	ex.ResponseWriter = w
	return ex
}

// PutExchange recycles ex; it must not be used afterwards.
func PutExchange(ex *Exchange) {
	attempts, calls := ex.attempts[:0], ex.calls[:0]
	if cap(attempts) > 16 {
		attempts = nil // a retry storm's array is not kept
	}
	*ex = Exchange{attempts: attempts, calls: calls}
	exchanges.Put(ex)
}

// exchangeOf returns the exchange in w's wrapper chain (middlewares'
// writers expose theirs through Unwrap, as http.ResponseController
// expects), or nil.
func exchangeOf(w http.ResponseWriter) *Exchange {
	for range 16 {
		switch x := w.(type) {
		case *Exchange:
			return x
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return nil
		}
	}
	return nil
}

// WriteHeader records the final status (a 1xx is replaced by what follows).
func (ex *Exchange) WriteHeader(code int) {
	if ex.status < 200 {
		ex.status = code
	}
	ex.ResponseWriter.WriteHeader(code)
}

func (ex *Exchange) Write(b []byte) (int, error) {
	if ex.status == 0 {
		ex.status = http.StatusOK
	}
	n, err := ex.ResponseWriter.Write(b)
	ex.bytes += int64(n)
	return n, err
}

// Flush sends buffered data to the client.
func (ex *Exchange) Flush() { _ = http.NewResponseController(ex.ResponseWriter).Flush() }

// FlushError is Flush reporting the error (http.ResponseController uses it).
func (ex *Exchange) FlushError() error { return http.NewResponseController(ex.ResponseWriter).Flush() }

// Hijack takes over the connection (WebSocket upgrades); the request is
// then recorded as 101 Switching Protocols, which the proxy writes on the
// hijacked connection itself.
func (ex *Exchange) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(ex.ResponseWriter).Hijack()
	if err == nil && ex.status == 0 {
		ex.status = http.StatusSwitchingProtocols
	}
	return c, rw, err
}

// Unwrap returns the wrapped writer (for http.ResponseController).
func (ex *Exchange) Unwrap() http.ResponseWriter { return ex.ResponseWriter }

// Status is the final status sent to the client; 0 until one was sent.
func (ex *Exchange) Status() int { return ex.status }

// Bytes counts the response body bytes the client's writer accepted.
func (ex *Exchange) Bytes() int64 { return ex.bytes }

// Upstream is the URL of the last server tried ("" when none was).
func (ex *Exchange) Upstream() string { return ex.upstream }

// Retries counts the servers tried after the first.
func (ex *Exchange) Retries() int { return ex.retries }

// Attempts are the tries on servers so far; the array is reused after
// PutExchange.
func (ex *Exchange) Attempts() []observe.Attempt { return ex.attempts }

// RecordOrigin notes that the router's service answered status and a
// middleware sent the client another answer (the errors middleware): the
// service's metrics and the access log's OriginStatus record status.
func (ex *Exchange) RecordOrigin(status int) { ex.origin = status }

// Origin is the status recorded by RecordOrigin (0: none).
func (ex *Exchange) Origin() int { return ex.origin }

// RecordServiceCall notes a call a middleware made to another service for
// this request (an error page): it gets its own service series.
func (ex *Exchange) RecordServiceCall(service string, status int, d time.Duration, bytes int64) {
	ex.calls = append(ex.calls, observe.ServiceCall{Service: service, Status: status, Duration: d, Bytes: bytes})
}

// ServiceCalls are the calls RecordServiceCall noted; the array is reused
// after PutExchange.
func (ex *Exchange) ServiceCalls() []observe.ServiceCall { return ex.calls }

// SetTrace attaches the request's spans (nil: not traced); the load
// balancer adds one per attempt to them.
func (ex *Exchange) SetTrace(tr *observe.Trace) { ex.trace = tr }

// Event is the observer's event of the request, held in the exchange so
// that reporting it allocates nothing; valid until PutExchange.
func (ex *Exchange) Event() *observe.RequestEvent { return &ex.ev }
