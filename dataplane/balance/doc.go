// Package balance holds the servers of the load-balancer services and
// what chooses among them: the long-lived per-server state (Backend:
// requests in flight, passive health), active health checks (HTTP and
// gRPC), the pickers of loadBalancer.strategy (smooth WRR, p2c, hrw,
// leasttime), sticky cookies, and the services that choose among child
// services by availability (failover, highestRandomWeight).
//
// Lifetimes: a Pool is long-lived and owns every Backend, Checker and
// Latency record, ref-counted by the generations using them so that state
// survives configuration swaps; it owns the checker goroutines and those
// started with Go, and Close cancels and joins them. Servers, pickers,
// cookies and services are built once per generation and immutable; on
// the request path they read only atomics and take no lock.
//
// Import direction: balance imports config and nothing of the dataplane;
// the dataplane (its generation and load-balancer handler) imports it.
// Forwarding a request to the picked server is not its business.
package balance
