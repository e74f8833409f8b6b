// Package acme obtains and renews certificates from ACME certificate
// authorities (Let's Encrypt, …) for the routers whose tls.certResolver
// names a resolver of certificatesResolvers.<name>.acme, as Traefik's ACME
// provider does (https://doc.traefik.io/traefik/https/acme/).
//
// A Manager is a providers.Provider named "acme": its snapshots hold only
// tls.certificates (the PEM certificate and key of every valid certificate
// it has), so a new or renewed certificate reaches the next generation like
// any other configuration change, without a reload or a dropped
// connection. It learns which domains routers need from Observe, which
// cmd/gantry calls with every applied configuration: the domains of
// tls.domains, else those of the router's Host rules, and the domain of
// tls.stores.default.defaultGeneratedCert. Meanwhile the generated default
// certificate serves.
//
// It answers challenges through the dataplane/certs.Challenges interface
// (HTTP01, TLSALPN01), which the entrypoints call ahead of routing.
//
// Accounts and certificates are kept in a KV in Traefik's acme.json layout
// per resolver: Gantry's bbolt store, or a store shared by several
// instances: Consul KV for a "consul://host:port/prefix" storage, a
// Kubernetes Secret for a "kubernetes://namespace/secret" one (see
// kubeScheme). A lock per domain set (a Consul session lock, a Lease)
// makes one instance order it; the others watch the stored data and take
// the result; challenge answers are shared too; a failed order's backoff
// is stored for all instances, and the first account is registered under
// a resolver-wide lock. An existing acme.json named by storage is
// imported on first start, so migrating from Traefik orders nothing
// again, and is kept up to date (mode 0600) for a way back.
//
// Goroutines: Run owns every goroutine it starts (one per order in
// progress, one watch per shared store) and joins them before it returns.
// Observe, Certificates, Problems and Wants never block on the network;
// HTTP01 and TLSALPN01 ask a shared store only for tokens they do not
// hold, bounded in concurrency and time.
package acme
