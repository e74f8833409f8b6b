// Package dataplane serves traffic: entrypoint listeners (one SO_REUSEPORT
// listener per GOMAXPROCS on Linux), the entry handler, the reverse proxy,
// load balancing, active and passive health checks and TLS.
//
// Lifetimes and invariants:
//
//   - A Pool is long-lived. It owns every Backend (in-flight count, passive
//     failures), every active health checker (keyed by server URL and check
//     configuration) and the upstream Transports (keyed by serversTransport
//     configuration), ref-counted so that state survives configuration swaps.
//     Pool.Close stops every checker goroutine it started.
//   - A Generation is built once per merged configuration (it implements
//     router.HandlerBuilder, router.TLSBuilder and middleware.Resolver). The
//     handlers it builds are immutable: pickers read only atomics, nothing on
//     the request path takes a lock. Generation.Close, called after the swap,
//     releases its backends and waits for the mirror requests it started.
//   - A Server owns its listeners and the goroutines serving them; Shutdown
//     stops accepting, waits for in-flight requests (including upgraded
//     WebSocket connections) up to each entrypoint's graceTimeOut, then
//     closes what is left.
//
// Per-connection facts (entrypoint, TLS, whether the peer is a trusted
// forwarder) reach handlers through the connection's context, so the request
// path allocates nothing for them.
package dataplane
