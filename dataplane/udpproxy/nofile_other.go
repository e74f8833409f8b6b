//go:build !unix

package udpproxy

// nofileLimit is unknown outside Unix: sessions are bounded by maxSessions.
func nofileLimit() uint64 { return 0 }
