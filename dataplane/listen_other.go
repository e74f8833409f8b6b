//go:build !linux

package dataplane

import "net"

// listenerCount is 1 outside Linux: SO_REUSEPORT does not balance accepts
// the same way elsewhere, so one listener and one accept loop serve.
func listenerCount() int { return 1 }

// listenConfig is the default listen configuration.
func listenConfig() *net.ListenConfig { return &net.ListenConfig{KeepAliveConfig: acceptKeepAlive} }
