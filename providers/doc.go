// Package providers defines how sources of configuration feed Gantry: each
// Provider publishes complete Snapshots, and the Aggregator keeps the latest
// snapshot per provider, debounces, merges them with qualified names
// ("web@docker"), versions the result by content hash, and hands each new
// Merged configuration to an apply function.
//
// Merge rules (Merge): every object of provider p is renamed "name@p";
// references without "@" inside it (router service and middlewares, chain
// middlewares, errors service, weighted/mirroring/failover children,
// serversTransport, router tls.options, service middlewares) resolve in p,
// while "x@other" is kept as written (case 011). TLS certificates are
// concatenated; TLS options and stores named "default" stay unqualified,
// and are left out with a Problem when two providers define one (as
// Traefik does). Version is the hex SHA-256 of the canonical JSON of the
// merged configuration; an unchanged Version is never applied twice.
//
// Timing (Aggregator.Run): a publish starts a quiet window (debounce,
// default 100ms, Traefik's providersThrottleDuration); every further publish
// restarts it, up to 10 windows after the first, so a constant stream of
// changes still gets applied. A provider whose Run fails or panics is
// restarted after 100ms, doubling up to 10s; its last snapshot stays in
// effect. Seed installs the configuration restored from the store so that
// each provider's stored part is served until that provider publishes.
//
// Snapshots and Merged values are immutable once published: Merge copies
// what it must change. The Aggregator owns the goroutines of the providers
// it runs; Run blocks until its context is done and then waits for them.
package providers
