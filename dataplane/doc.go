// Package dataplane serves traffic: the entrypoints (listeners, one
// SO_REUSEPORT listener per GOMAXPROCS on Linux; the entry handler;
// HTTP/3; TCP and UDP entry; shutdown and the binary upgrade's sockets).
// It routes through the live router.Table (router.Active); the handlers
// of each table are built by package generation, which this package does
// not import.
//
// Sub-packages hold the parts, and none imports this package:
//
//   - generation: the Generation that builds each configuration's
//     handlers (router.Builder) and the Pool of state that outlives it;
//   - conninfo: what the entrypoint knows about a client connection,
//     carried to those handlers in the connection's context;
//   - proxy: one request's Exchange and the loadBalancer service's handler
//     forwarding it (errors to statuses, forwarding headers, the upstream
//     transports of each serversTransport);
//   - balance: the servers and what chooses among them (pickers, active
//     and passive health, sticky cookies) and the services over child
//     services (weighted, highestRandomWeight, failover, mirroring);
//   - certs: the certificate store by SNI, tls.options, OCSP stapling,
//     certificate file watching, ACME challenge hooks;
//   - upstream (the client to backends), h1 (the HTTP/1.1 server),
//     middleware, observe (request events, metrics, logs, tracing),
//     tcpproxy and udpproxy, handoff (the binary upgrade's sockets).
//
// This package keeps the entrypoints: server.go (the Server and its
// entrypoint set), entrypoint.go (one entrypoint's settings), accept.go
// (listeners, accept loops and the first-byte sniff), protocols.go (the
// HTTP/1 and HTTP/2 servers and TLS), sniff.go, entry.go, trust.go,
// conncap.go, listen_*.go, http3.go, tcpentry.go, shutdown.go,
// replace.go, upgrade.go, challenges.go, redirections.go (the entrypoint
// redirections as internal routes) and sanitize.go.
//
// Lifetimes and invariants:
//
//   - A generation.Pool is long-lived. It owns the servers' state (a balance.Pool:
//     backends with in-flight counts and passive failures keyed by server
//     origin, active health checkers keyed by server origin and check
//     configuration), the upstream transports (a proxy.Transports, keyed
//     by serversTransport configuration) and the default certificate with
//     the last good certificate files (a certs.Cache), ref-counted so that
//     state survives configuration swaps. Through the balance.Pool it owns
//     the goroutines of active checks and mirrored requests; Pool.Close
//     cancels and joins them.
//   - A generation.Generation is built once per merged configuration (it
//     implements router.Builder and middleware.Resolver). The handlers it
//     builds are immutable: pickers read only atomics, nothing on the
//     request path takes a lock. Generation.Close, called after the swap,
//     releases its backends, checkers and transports.
//   - A Server owns its listeners and the goroutines serving them; Shutdown
//     stops accepting, waits for in-flight requests (including upgraded
//     WebSocket connections) up to each entrypoint's graceTimeOut, then
//     closes what is left.
//
// Per-connection facts (entrypoint, TLS, whether the peer is a trusted
// forwarder, what the TLS handshake chose) reach handlers through the
// connection's context (package conninfo), so the request path allocates
// nothing for them.
//
// One request: package h1 (every HTTP/1.x connection, plain or TLS) or
// net/http's HTTP/2 server (h2, h2c) parses it; the entry handler
// (entry.go) applies the arrival policy (header-field cap, removal of the
// client's hop-by-hop fields before any middleware, forwarded headers,
// redirection), loads the table once and calls the router's chain:
// recover → observer → entrypoint middlewares → router middlewares →
// service. The observer layer (generation/chain.go) carries the request's
// proxy.Exchange (pooled, the one ResponseWriter wrapper, recording status
// and bytes). A load-balancer service (package proxy) picks a server
// (package balance: smooth WRR, p2c, hrw or leasttime, skipping servers
// that active or passive health took out); each attempt is begin() and a
// deferred done(), and the server's connection pool in package upstream
// forwards: the request head is written straight from the request (no
// header copy), the body streamed, the response relayed with strict
// framing checks, a broken response aborted (never completed). Errors map
// to 502/503/504/408 and 499; a bodiless request whose connection was
// refused is retried on another server.
package dataplane
