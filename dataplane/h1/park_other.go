//go:build !linux

package h1

// Idle connections wait on their goroutine on this platform.
func (s *Server) park(*conn) bool { return false }

// CloseIdle is a no-op without parking: idle waits are cut by deadline.
func (s *Server) CloseIdle() {}

type parker struct{}
