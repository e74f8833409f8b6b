// Package providers defines how sources of configuration feed Gantry: each
// Provider publishes complete Snapshots, and the Aggregator keeps the latest
// snapshot per provider, debounces, merges them with qualified names
// ("web@docker"), versions the result by content hash, and hands each new
// Merged configuration to an apply function.
//
// Snapshots and Merged values are immutable once published. The Aggregator
// owns the goroutines of the providers it runs; each Run blocks until its
// context is done.
package providers
