package udpproxy

import (
	"fmt"
	"net"

	"github.com/gantry-proxy/gantry/dataplane/handoff"
)

// Inherit makes Start serve on the UDP sockets a previous Gantry passed
// (binary upgrade, key "udp/<entrypoint>") when their address is the
// entrypoint's. Call it before Start; in may be nil.
func (s *Server) Inherit(in *handoff.Inherited) { s.inherit = in }

// Sockets returns a duplicate of every entrypoint's socket for a new
// process; the caller closes the files.
func (s *Server) Sockets() ([]handoff.Socket, error) {
	var out []handoff.Socket
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.eps {
		if e.conn == nil {
			continue
		}
		f, err := e.conn.File()
		if err != nil {
			for _, so := range out {
				_ = so.File.Close()
			}
			return nil, fmt.Errorf("entrypoint %s: %w", e.Name, err)
		}
		out = append(out, handoff.Socket{Key: "udp/" + e.Name, File: f})
	}
	return out, nil
}

// inherited returns e's inherited socket, or nil (none, or bound to
// another address: it is closed and e binds anew).
func (s *Server) inherited(e *entry) (net.PacketConn, error) {
	pc, err := s.inherit.PacketConn("udp/" + e.Name)
	if err != nil || pc == nil {
		return nil, err
	}
	want, err := net.ResolveUDPAddr("udp", e.Address)
	got, ok := pc.LocalAddr().(*net.UDPAddr)
	if err != nil || !ok || (want.Port != 0 && want.Port != got.Port) ||
		!(want.IP.Equal(got.IP) || (len(want.IP) == 0 || want.IP.IsUnspecified()) && got.IP.IsUnspecified()) {
		_ = pc.Close()
		return nil, nil
	}
	s.log.Info("upgrade: serving on the inherited socket", "entrypoint", e.Name, "address", got.String()+"/udp")
	return pc, nil
}
