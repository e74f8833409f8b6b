// Package instance holds one running Gantry proxy: the long-lived state a
// process keeps across configuration swaps (the upstream pool, the active
// routing table, the live dataplane generation, the dynamic entrypoints,
// the providers' aggregator and the store of the last good configuration)
// and the goroutines that keep it current. Its type, Instance, is the
// lifecycle as ordered, documented steps (design.md §2.4):
//
//  1. New opens the store and makes the pool, the table and the aggregator:
//     nothing listens and nothing runs yet.
//  2. Start restores the last good configuration (it serves before any
//     provider reports), binds the entrypoints (or takes over those of an
//     upgraded process), starts the dynamic entrypoints, then the
//     components: the aggregator with its providers, the certificate file
//     watcher, the OCSP stapler and those the caller adds.
//  3. Apply swaps in each merged configuration: build, swap, then retire
//     the old (Caddy's changeConfig order).
//  4. ReloadStatic (with OpenEntryPoints before it) applies what a static
//     configuration read again changes in the running proxy.
//  5. Sockets and HandedOver are the binary upgrade's handoff; Start's
//     Inherited is the other side.
//  6. Shutdown drains the entrypoints, stops and joins every component,
//     then retires the generation, the pool and the store.
//
// Package main keeps what belongs to the process: flags, the static
// configuration's loading, signals, the internal services (API, metrics,
// ping) and the upgrade's child process.
//
// Import order: config ← providers ← router ← dataplane ← instance ← cmd.
// The instance does not import the dashboard (nor the dashboard the
// instance): what it needs of it, the figures saved with a revision,
// cmd passes in as Options.Counts.
package instance
