package dataplane

import (
	"github.com/gantry-proxy/gantry/dataplane/certs"
)

// SetChallenges makes every entrypoint answer the ACME challenges of c
// ahead of any router and ahead of entrypoint redirections, as Traefik
// does, entrypoints added later included (certs.AnswerHTTP01; TLS-ALPN-01
// through the generation's certificate store, for the names c is
// validating). http01EntryPoints are the entrypoints of the resolvers'
// httpChallenge: there every request under /.well-known/acme-challenge/
// is answered by Gantry, 404 for a token it does not know (Traefik's
// acme-http@internal router, priority MaxInt), unless the entrypoint sets
// allowACMEByPass. Call it before Start; nil turns answering off.
func (s *Server) SetChallenges(c certs.Challenges, http01EntryPoints ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.challenges = c
	s.http01 = map[string]bool{}
	for _, name := range http01EntryPoints {
		s.http01[name] = true
	}
	for name, ep := range s.eps {
		ep.challenges = c
		ep.http01 = s.http01[name]
	}
}
