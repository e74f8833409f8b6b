// Package tcpmux compiles TCP router rules (Traefik v3's HostSNI,
// HostSNIRegexp, ClientIP and ALPN, with &&, || and !) and holds the
// per-entrypoint TCP routing table of one generation: routers without TLS,
// routers with TLS (passthrough or terminated), and the hosts of the
// entrypoint's HTTPS routers, which decide precedence. Everything here is
// immutable once built and safe for concurrent use; matching takes no lock.
//
// Source: traefik pkg/muxer/tcp (matcher.go, mux.go) and
// pkg/server/router/tcp/router.go.
package tcpmux
