// Package middleware implements Traefik v3's open-source HTTP middlewares
// (https://doc.traefik.io/traefik/middlewares/http/overview/) as plain
// func(http.Handler) http.Handler values, one file per middleware:
// addPrefix, basicAuth, buffering, chain, circuitBreaker, compress,
// contentType, digestAuth, encodedCharacters, errors, forwardAuth,
// grpcWeb, headers, ipAllowList (and its v2 name ipWhiteList),
// inFlightReq, passTLSClientCert, rateLimit, redirectRegex,
// redirectScheme, replacePath, replacePathRegex, retry, stripPrefix and
// stripPrefixRegex, with Traefik's option names and defaults.
//
// New builds one middleware from its configuration, once per configuration
// generation, never per request; Chain composes several around a handler.
// Per-request state lives on the stack or in the request; long-lived state
// (rate-limit buckets, circuit-breaker statistics) belongs to the built
// value and dies with its generation. Middlewares that rewrite the path
// hand a copy of the request to the next handler, so outer middlewares
// (retry, errors) keep seeing what the client sent.
//
// Bad options are errors of the form "middleware NAME: KIND.FIELD: what
// is wrong" (a bad regexp, an unknown service, a missing usersFile, a chain
// member that does not exist or loops); the caller disables the routers
// that use the middleware and keeps serving everything else. Unknown
// option names are rejected earlier, by the decoders in package config.
//
// Trust: ipAllowList, rateLimit and inFlightReq read X-Forwarded-For (with
// an ipStrategy), and redirectScheme, redirectRegex and errors read
// X-Forwarded-Proto, as they arrive. The dataplane removes X-Forwarded-*
// headers sent by peers that are not trusted proxies before any middleware
// runs, so what a middleware sees is trustworthy.
package middleware
