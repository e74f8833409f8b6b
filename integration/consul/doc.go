// Package consul holds the integration tests of Gantry's Consul Catalog and
// Consul KV providers against a real Consul agent (v1.14.8, built by
// scripts/setup/consul.sh from integration/consulagent), run in -dev mode on
// free loopback ports and stopped when each test ends.
//
// The tests find the agent through $GANTRY_CONSUL_BIN or the setup script's
// cache path, and skip when neither exists. Provider-level tests run the
// providers in-process and inspect their snapshots; end-to-end tests start
// the real gantry binary and whoami backends (integration/harness) and check
// what a client gets through Gantry.
package consul
