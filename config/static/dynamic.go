package static

// DynamicEntryPoints is Gantry's dynamicEntryPoints section: which
// listeners providers may ask for (the label or Consul tag
// gantry.entrypoints.<name>.address, a dynamic file's entryPoints), and the
// settings those listeners get. Without it no provider can open a port.
// Answers traefik/traefik#6551.
//
//	dynamicEntryPoints:
//	  allowed: ["8000-8099", "127.0.0.1:9000-9009", "udp:5300-5310"]
//	  template:
//	    transport: {lifeCycle: {graceTimeOut: 5s}}
type DynamicEntryPoints struct {
	// Allowed lists the addresses a request may use, each
	// "[tcp:|udp:][ip:]port[-port]": the protocol (default tcp), an IP
	// ("[::1]" for IPv6) when only that address may be bound (else any
	// address, the wildcard included), and a port or an inclusive range.
	Allowed []string `json:"allowed,omitempty"`
	// MaxEntryPoints bounds how many dynamic entrypoints are open at once
	// (each holds listeners and goroutines); 0 means 100. Beyond it, the
	// requests already served keep their listeners and the others are
	// problems.
	MaxEntryPoints int `json:"maxEntryPoints,omitempty"`
	// Template holds the settings of every dynamic entrypoint, as an
	// entryPoints.<name> block without address: transport (timeouts,
	// maxConnections, lifeCycle.graceTimeOut, also the grace period of a
	// listener no provider asks for any more), forwardedHeaders,
	// proxyProtocol, http2, http3, maxHeaderBytes, http.sanitizePath and
	// http.encodedCharacters. Options keyed by entrypoint elsewhere
	// (asDefault, http.middlewares, http.tls, http.redirections,
	// http.notFound) are refused here.
	Template *EntryPoint `json:"template,omitempty"`
}
