package dataplane

import "github.com/gantry-proxy/gantry/dataplane/observe"

// SetTracing makes the Server's entrypoints trace the requests no router
// matches (an EntryPoint span each, as Traefik's entrypoint tracing covers
// every request); routed requests are traced by their router chain
// (generation.Options.Tracing). nil stops it. Safe to call while serving.
func (s *Server) SetTracing(t *observe.Tracing) { s.tracing.Store(t) }
