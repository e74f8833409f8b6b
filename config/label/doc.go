// Package label decodes flat dotted keys — Docker labels, Consul Catalog
// tags, Consul KV paths — into a config.Configuration, following Traefik v3's
// label grammar (https://doc.traefik.io/traefik/routing/providers/docker/ and
// Traefik's paerser decoder).
//
// It builds a key tree from the labels and decodes it with package
// config/node, Gantry's one reflective decoder, which maps key segments
// onto the JSON field names of the config structs, case-insensitively.
// Everything it returns is freshly allocated and owned by the caller; the
// package has no state and is safe for concurrent use.
//
// Grammar, in short (see Decode for the details):
//
//	<prefix>.http.routers.<name>.rule=Host(`a.example.com`)
//	<prefix>.http.routers.<name>.entrypoints=web,websecure      comma list
//	<prefix>.http.routers.<name>.tls=true                      empty block
//	<prefix>.http.routers.<name>.tls.domains[0].sans=a,b        indexed array
//	<prefix>.http.services.<name>.loadbalancer.server.port=8080 servers[0]
//	<prefix>.http.middlewares.<name>.headers.customrequestheaders.X-Env=prod
//
// Errors are per key: a bad key disables only the object (router, service,
// middleware, serversTransport, TLS store) it belongs to, and the KeyError
// names the full key as written.
package label
