package balance

import (
	"net/url"
	"time"
)

// Server is one server of a load-balancer service in one generation, as
// the pickers see it: the shared backend state, its active checker (nil
// when the service has no healthCheck), its weight and its service's
// passive-health policy (nil when the service has none).
type Server struct {
	URL     *url.URL // as configured (path kept)
	Backend *Backend
	Check   *Checker
	Weight  int
	Passive *Passive
	// Fenced: a terminating server (config.Server.Fenced) that no picker
	// chooses; a sticky cookie naming it still reaches it while it is
	// Available.
	Fenced bool
}

// Pickable reports whether a picker may choose the server for a new
// session: Available and not Fenced.
func (s *Server) Pickable() bool { return !s.Fenced && s.Available() }

// Available reports whether the server may take traffic now: its active
// check (if any) passes and, when the service has a passiveHealthCheck,
// passive health has not taken the server out. Lock-free.
func (s *Server) Available() bool {
	if s.Check != nil && !s.Check.up.Load() {
		return false
	}
	return s.Passive == nil || s.Backend.passiveUp(nowNano)
}

func nowNano() int64 { return time.Now().UnixNano() }
