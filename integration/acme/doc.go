// Package acme tests Gantry's ACME resolvers end to end through the gantry
// binary against Pebble, Let's Encrypt's ACME test server (built by
// scripts/setup/pebble.sh), whose validation authority reaches Gantry's
// entrypoints through pebble-challtestsrv's DNS (every name is 127.0.0.1):
// HTTP-01, TLS-ALPN-01, renewal, a CA that is down at start, and a
// Traefik acme.json imported without a new order.
package acme
