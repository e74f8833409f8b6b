// Package consul holds Gantry's two Consul providers, compatible with
// Traefik v3's:
//
//   - Catalog ("consulcatalog", providers.consulCatalog): services registered
//     in Consul's catalog, configured by tags of the form
//     <prefix>.<path>=<value> decoded by config/label, filtered by health
//     (strictChecks), exposedByDefault and constraints. Source:
//     https://doc.traefik.io/traefik/providers/consul-catalog/
//   - KV ("consul", providers.consul): a Traefik dynamic configuration laid
//     out as keys under rootKey (traefik/http/routers/<r>/rule, …). Source:
//     https://doc.traefik.io/traefik/providers/consul/ and
//     https://doc.traefik.io/traefik/routing/providers/kv/
//
// Each provider splits into a watcher (Consul blocking queries with WaitIndex,
// bounded by endpointWaitTime and a request deadline, retried with backoff)
// and a pure function from Consul's data to a providers.Snapshot: the
// catalog's build (health entries → snapshot; Run re-decodes only the
// services that changed) and DecodeKV for the KV tree. Almost every test targets those
// pure functions; integration/consul runs both providers against a real
// Consul agent.
//
// Ownership: Run owns every goroutine it starts and joins them before it
// returns. A published Snapshot is never touched again. When Consul is
// unreachable nothing is published, so the last snapshot stays in effect
// (case 019); after recovery the providers re-read everything from index 0.
package consul
