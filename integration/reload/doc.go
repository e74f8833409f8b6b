// Package reload holds the end-to-end tests of configuration reloads: the
// cost of one merge + compile + swap at 10 000 routers (BenchmarkSwap), the
// file provider's changes served through the instance gantry runs
// (instance.Instance, in process), a
// load test through the real gantry binary while its file configuration is
// rewritten ten times a second, and a restart served from the store with
// the file provider's directory missing. The package has no non-test code.
package reload
