// Package generation builds the handlers of one merged configuration:
// a Generation implements router.Builder (router.Compile asks it for
// every HTTP, TCP and UDP router's handler chain, the entrypoints'
// not-found pages and the certificate store) and middleware.Resolver, and
// is swapped in with the table built from it. A Pool holds what outlives
// a generation (the servers' state, health checkers, upstream
// transports, the last good certificate files, TCP health and in-flight
// counts), ref-counted so that state carries over a swap.
//
// Files: generation.go (the Generation, router chains), services.go (HTTP
// services), chain.go (the recover and observer layers, entrypoint
// middlewares, internal routes), tcpbuild.go (TCP and UDP routers and
// services), tls.go (the certificate store and the tls.options a request
// negotiated), notfound.go (entryPoints.<ep>.http.notFound), tracks.go,
// pool.go.
//
// The handlers read what the entrypoint knows about a request's
// connection through package conninfo; this package never imports the
// entrypoint server (package dataplane), which serves the tables built
// here through router.Active. Its tests run each generation behind a real
// dataplane.Server.
package generation
