//go:build !linux

package h1

import "time"

// Idle connections wait on their goroutine on this platform.
func (s *Server) park(*conn) bool { return false }

// CloseIdle is a no-op without parking: idle waits are cut by deadline.
func (s *Server) CloseIdle() {}

// OldestParked reports false: nothing is parked on this platform.
func (s *Server) OldestParked() (idleUntil time.Time, ok bool) { return time.Time{}, false }

// CloseOldestParked reports false: nothing is parked on this platform.
func (s *Server) CloseOldestParked() bool { return false }

type parker struct{}
