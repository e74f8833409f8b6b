// Package dashboard serves Gantry's API and live dashboard: Traefik's read
// endpoints with Traefik's JSON shapes (/api/overview, /api/rawdata,
// /api/entrypoints, /api/http/routers|services|middlewares, /api/version,
// https://doc.traefik.io/traefik/operations/api/), Gantry's own endpoints
// (/api/providers, /api/problems, /api/revisions, /api/simulate,
// /api/series), the WebSocket feed /api/ws and the embedded web UI under
// /dashboard/.
//
// The package is read-only over the rest of Gantry. It sees the routing
// table, the backend pool, the providers and the store only through the
// small interfaces in sources.go, so it is tested with fakes and wired by
// cmd/gantry with adapters over the real types.
//
// Invariants:
//   - Every JSON response (and every WebSocket message) passes through one
//     encoder that redacts secrets (basic/digest auth hashes, TLS keys,
//     tokens, passwords, passwords in URLs): see redact.go.
//   - There is no subscriber registry. Each WebSocket connection has one
//     goroutine, owned by its HTTP handler, that waits on the current
//     table's Replaced channel, the pool's Changed channel and the
//     sampler (a ticker without live statistics),
//     then writes the current state. A slow client only misses
//     intermediate states; nothing upstream ever waits for it.
//   - With live statistics, one sampler goroutine (series.go) turns the
//     counters into a bounded ring of per-second and per-minute rates each
//     StatsInterval and wakes the WebSocket loops, which push that sample.
//   - API.Close ends every WebSocket loop and the sampler; the HTTP server
//     owns the rest.
package dashboard
