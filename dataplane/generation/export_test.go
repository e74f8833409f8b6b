package generation

// TCPInFlightLen is the number of inFlightConn counts p keeps, for the
// external tests.
func (p *Pool) TCPInFlightLen() int { return p.tcpInFlight.Len() }
