package dataplane

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/dataplane/upstream"
)

// exchange is one request's record from the router chain to the end, and
// the one ResponseWriter wrapper on the request path: it records the
// status and body bytes sent to the client, which the observer (access
// log, metrics, live statistics) reads instead of wrapping again.
//
// Lifecycle: the observer layer of a router chain (observeHandler) takes
// one from a sync.Pool when the request enters the chain and puts it back
// when the chain returns; when a router is not observed, the load
// balancer takes one itself for the forwarding scratch space. Inner
// layers find it in the ResponseWriter chain (exchangeOf), never through
// the request's context, so carrying it costs no allocation. An exchange
// must not be used after the handler that took it returned.
//
// Per forwarding attempt (lbHandler.attempt): the picked target's begin(),
// then a deferred done(), which runs even when the response is aborted
// with panic(http.ErrAbortHandler), and feeds in-flight counts, passive
// health, leasttime's TTFB and the record here.
type exchange struct {
	http.ResponseWriter // the client's writer; nil when used as scratch only

	status int   // final status sent to the client; 0 until sent
	bytes  int64 // response body bytes accepted by the client's writer

	// Filled by the load balancer.
	upstream string        // URL of the last server tried
	retries  int           // servers tried after the first
	ttfb     time.Duration // the last attempt's time to the backend's first response head
	out      upstream.Outbound
	attempts []observe.Attempt // each try on a server, for the observers (backing array reused)
	trace    *observe.Trace    // the request's spans; nil when not traced
	ev       RequestEvent      // the observer's event, reported before the exchange is recycled
}

// recordWriter is the name entry.go uses for the exchange it wraps
// unrouted requests in.
type recordWriter = exchange

var exchanges = sync.Pool{New: func() any { return new(exchange) }}

// getExchange returns a clean exchange wrapping w (nil: scratch only).
func getExchange(w http.ResponseWriter) *exchange {
	ex := exchanges.Get().(*exchange)
	ex.ResponseWriter = w
	return ex
}

// putExchange recycles ex; it must not be used afterwards.
func putExchange(ex *exchange) {
	attempts := ex.attempts[:0]
	if cap(attempts) > 16 {
		attempts = nil // a retry storm's array is not kept
	}
	*ex = exchange{attempts: attempts}
	exchanges.Put(ex)
}

// exchangeOf returns the exchange in w's wrapper chain (middlewares'
// writers expose theirs through Unwrap, as http.ResponseController
// expects), or nil.
func exchangeOf(w http.ResponseWriter) *exchange {
	for range 16 {
		switch x := w.(type) {
		case *exchange:
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
func (ex *exchange) WriteHeader(code int) {
	if ex.status < 200 {
		ex.status = code
	}
	ex.ResponseWriter.WriteHeader(code)
}

func (ex *exchange) Write(b []byte) (int, error) {
	if ex.status == 0 {
		ex.status = http.StatusOK
	}
	n, err := ex.ResponseWriter.Write(b)
	ex.bytes += int64(n)
	return n, err
}

// Flush sends buffered data to the client.
func (ex *exchange) Flush() { _ = http.NewResponseController(ex.ResponseWriter).Flush() }

// FlushError is Flush reporting the error (http.ResponseController uses it).
func (ex *exchange) FlushError() error { return http.NewResponseController(ex.ResponseWriter).Flush() }

// Hijack takes over the connection (WebSocket upgrades); the request is
// then recorded as 101 Switching Protocols, which the proxy writes on the
// hijacked connection itself.
func (ex *exchange) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(ex.ResponseWriter).Hijack()
	if err == nil && ex.status == 0 {
		ex.status = http.StatusSwitchingProtocols
	}
	return c, rw, err
}

// Unwrap returns the wrapped writer (for http.ResponseController).
func (ex *exchange) Unwrap() http.ResponseWriter { return ex.ResponseWriter }
