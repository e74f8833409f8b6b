// Package balance holds the servers of the load-balancer services and
// what chooses among them: the long-lived per-server state (Backend:
// requests in flight, passive health), active health checks (HTTP and
// gRPC), the pickers of loadBalancer.strategy (smooth WRR, p2c, hrw,
// leasttime), sticky cookies, and the services built over child services
// (weighted, highestRandomWeight, failover, mirroring).
//
// Lifetimes: a Pool is long-lived and owns every Backend, Checker and
// Latency record, ref-counted by the generations using them so that state
// survives configuration swaps; it owns the checker goroutines and those
// of mirrored requests, and Close cancels and joins them. Servers, pickers,
// cookies and services are built once per generation and immutable; on
// the request path they read only atomics and take no lock.
//
// Import direction: balance imports config and dataplane/middleware (the
// status ranges of failover.errors), never the dataplane root or proxy;
// the dataplane's generation and package proxy's load balancer import it.
// Forwarding a request to the picked server is not its business.
package balance
