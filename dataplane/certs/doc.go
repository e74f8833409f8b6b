// Package certs holds what serving TLS needs: the certificate Store chosen
// by SNI (exact name, wildcard, default; sniStrict), the resolved
// tls.options of each host (Policy), the default certificate and the last
// good pair of each certificate file kept across generations (Cache),
// OCSP stapling (Stapler), the watch on certificate files (CertFiles), the
// ACME challenge hooks (HTTP-01 answers, TLS-ALPN-01 certificates) and the
// loading of key pairs from files or inline PEM.
//
// A Store and its Policies are built once per configuration generation
// (Build) and immutable; the Cache, Stapler and CertFiles are long-lived.
// A server connection meets them through its Handshake: the Store writes
// the TLS options it chose for the SNI name there, the server the
// certificate it chose, and the Policy's tls.Config serves it.
//
// Import direction: certs imports config (and config/rule) only; the
// dataplane (its generation, entrypoints and TCP routers) and package
// proxy (the upstream transports' client certificates) import it.
package certs
