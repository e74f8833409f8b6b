package balance

import "net/http"

// Availabler is implemented by service handlers that know whether they can
// serve right now (a load balancer with at least one available server, a
// weighted, failover or highestRandomWeight service with an available
// child). Parents use it to skip children that would answer 503.
type Availabler interface{ Available() bool }

// Available reports whether h can serve now: true unless h is an
// Availabler that says otherwise.
func Available(h http.Handler) bool {
	a, ok := h.(Availabler)
	return !ok || a.Available()
}
