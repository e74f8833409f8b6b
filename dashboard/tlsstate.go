package dashboard

import "crypto/tls"

// simulatedTLS is the connection state of a simulated HTTPS request: TLS
// 1.3 with the URL's host as SNI, so TLS routers and HostSNI-style checks see
// what a real client would send.
func simulatedTLS(sni string) *tls.ConnectionState {
	return &tls.ConnectionState{Version: tls.VersionTLS13, HandshakeComplete: true, ServerName: sni, NegotiatedProtocol: "http/1.1"}
}
