// Package proxy forwards a routed request to a server of its service:
// the per-request Exchange (pooled, the one ResponseWriter wrapper,
// recording status, bytes, the servers tried and the observer's event),
// the loadBalancer service's handler (a balance picker or sticky cookie
// chooses the Target; each attempt is Backend.Begin and a deferred done
// feeding in-flight counts, passive health and leasttime; a bodiless
// request whose connection was refused is retried on another server), the
// mapping of forwarding errors to 502/503/504/408/400 and 499, the
// forwarding headers set once on arrival (PrepareForwarded), and the
// upstream transports of each serversTransport (Transports) over package
// upstream's client.
//
// Import direction: proxy imports config, balance, certs, observe,
// middleware and upstream, and nothing of the dataplane root, which
// imports it (its generation builds the handlers, its entry handler and
// router chains carry the Exchange).
package proxy
