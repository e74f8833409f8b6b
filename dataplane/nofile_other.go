//go:build !unix

package dataplane

// nofileLimit is unknown outside Unix: the default cap is
// defaultMaxConnections.
func nofileLimit() uint64 { return 0 }
