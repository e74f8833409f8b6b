// Package router compiles a merged configuration into an immutable routing
// Table and holds the live one in an Active.
//
// Compile parses each router's rule (Traefik v3 syntax, or v2 per router or
// by default; see package config/rule for the grammar), checks its
// references, asks the Builder for its handler chain and installs
// it on its entrypoints. Compile never fails as a whole: whatever is
// broken is left out and explained in the Report, in the statuses of
// Traefik's API (enabled, warning, disabled).
//
// Per entrypoint and transport (TLS or plain) a mux keeps the routes in
// priority order (the configured priority, else len(rule); ties by
// qualified router name) and indexes them by exact host and by wildcard
// suffix; routes with no host condition sit in a fallback list. A lookup
// merges the index entries for the request's host with the fallback list
// by rank, so it returns exactly what a linear scan in priority order
// would, and it allocates nothing unless the host has upper-case letters
// or the path has percent-escapes.
//
// Matching follows Traefik v3 (https://doc.traefik.io/traefik/routing/routers/#rule):
// hosts compare case-insensitively without port and trailing dot; paths
// are matched on the routing path, in which escapes of reserved characters
// (%2F, %3F, %25, …) stay encoded; ClientIP uses the peer address only.
//
// Invariants: a Table and everything reachable from it is immutable once
// Compile returns; the request path does one Active.Load and takes no
// lock. Active.Swap closes the old table's Replaced channel. The package
// starts no goroutines.
package router
