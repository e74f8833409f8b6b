// Package tcpproxy serves routed TCP connections: load balancing over
// servers (smooth weighted round robin, skipping servers a TCP health check
// marked down), weighted services, the serversTransport (dial timeout and
// keep-alive, TLS to the server, PROXY protocol v1/v2 towards it,
// terminationDelay), the ipAllowList and inFlightConn middlewares, and the
// byte copy itself, which splices when both ends are TCP sockets and
// propagates half-close both ways. On Linux a server given by IP address
// is dialled on a raw socket (dataplane/internal/rawtcp).
//
// Handlers are built once per generation and immutable; the only mutable
// state is atomics (health, in-flight counts) and the per-connection
// goroutines, which ServeTCP owns and joins before it returns.
// Source: traefik pkg/tcp (proxy.go, dialer.go, wrr_load_balancer.go),
// pkg/server/service/tcp, pkg/middlewares/tcp.
package tcpproxy
