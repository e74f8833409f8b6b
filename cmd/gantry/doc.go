// Command gantry is the Gantry reverse proxy.
//
// Usage:
//
//	gantry [run] [--configFile=FILE] [--<option>=<value>...]
//	gantry validate [--configFile=FILE] [--<option>=<value>...]
//	gantry healthcheck [--configFile=FILE] [--<option>=<value>...]
//	gantry version
//
// The static configuration uses Traefik v3's static layout
// (https://doc.traefik.io/traefik/reference/static-configuration/overview/):
// entryPoints, providers, api, ping, log, accessLog, metrics, plus Gantry's
// own store section. It is read from a YAML or TOML file (--configFile, or
// the first of ./gantry.{yml,yaml,toml}, ./traefik.{…}, /etc/gantry/…,
// /etc/traefik/…), from TRAEFIK_* and GANTRY_* environment variables
// (GANTRY_ENTRYPOINTS_WEB_ADDRESS=:80) and from flags
// (--entryPoints.web.address=:80, --providers.docker, --log.level=DEBUG).
// Keys are case-insensitive. Sources are layered, later winning: file,
// TRAEFIK_*, GANTRY_*, flags. Every option Gantry does not know or support
// is reported as a warning naming it and where it came from.
//
// run (the default) serves traffic through an instance.Instance (the
// lifecycle: it restores the last good dynamic configuration from the
// store, starts the entrypoints and the providers, and applies each new
// merged configuration atomically); this package wires it to the
// providers, the internal services and the telemetry, and follows the
// signals (run.go). SIGHUP, or a
// change of the static configuration file, reloads the static
// configuration live (reload.go: what changed is applied, what needs a
// restart is refused by field) and SIGHUP re-reads the file provider;
// SIGTERM or SIGINT stop accepting connections, let in-flight requests
// finish within each entrypoint's transport.lifeCycle.graceTimeOut
// (default 10s) and exit 0; a second SIGTERM or SIGINT closes the
// remaining connections at once.
//
// validate checks the static configuration and every dynamic file of the
// file provider (decoding, Validate, rule parsing and references, as run
// would compile them), prints each problem with its source, and exits 1
// when there is any error, 0 otherwise.
//
// healthcheck GETs /ping on the ping entrypoint over loopback and exits 0
// when it answers 200, else 1: Traefik's command for container
// HEALTHCHECK lines ("gantry healthcheck --ping").
//
// version prints the version, the Go version and the platform.
//
// Exit codes: 0 success, 1 invalid configuration or runtime failure, 2 bad
// command line.
package main
