//go:build !linux

package dataplane

import "net"

// listenerCount is 1 outside Linux: SO_REUSEPORT does not balance accepts
// the same way elsewhere, so one listener and one accept loop serve.
func listenerCount() int { return 1 }

// listenConfig is the default listen configuration; keep-alive is set on
// each accepted connection (the inheritance of the listener's options is
// Linux's).
func listenConfig() *net.ListenConfig { return &net.ListenConfig{KeepAliveConfig: acceptKeepAlive} }

// inheritKeepAlive does nothing: keep-alive is set at accept.
func inheritKeepAlive(net.Listener) error { return nil }
