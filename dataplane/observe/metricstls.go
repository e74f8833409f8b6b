package observe

import "sync"

// tlsKey is one combination of TLS request labels: the connection's
// version and cipher suite (crypto/tls IDs) and the request's names.
type tlsKey struct {
	version, cipher     uint16
	ep, router, service string
}

// level is a metrics level, the index of its family in a backend's
// entrypoint, router and service families.
type level int

// The levels, in tlsLabels order.
const (
	levelEntryPoint level = iota
	levelRouter
	levelService
)

// tlsLabels are the label (Prometheus) or attribute (OTLP) names of each
// level's TLS counter, in value order.
var tlsLabels = [...][]string{
	levelEntryPoint: {"tls_version", "tls_cipher", "entrypoint"},
	levelRouter:     {"tls_version", "tls_cipher", "router", "service"},
	levelService:    {"tls_version", "tls_cipher", "service"},
}

// tlsSeries are the TLS counters one tlsKey increments, one per level;
// a level's is the zero S when the backend does not record that level or
// the request has no name there. S is a Prometheus counter or an OTLP
// series.
type tlsSeries[S any] struct{ ep, rt, svc S }

// tlsBackend is a metrics backend (Metrics, OTLPMetrics) as tlsSeriesOf
// uses it: which levels it records, and the TLS counter of one level
// bound to label values (tlsLabels[l] order).
type tlsBackend[S any] interface {
	levels() (ep, router, service bool)
	tlsSeries(l level, values ...string) S
}

// tlsSeriesOf returns the TLS counters of k from cache (tlsKey ->
// *tlsSeries[S]), made by b and stored the first time k is seen. b is a
// type parameter, not an interface value or a func, so a lookup of a
// known key allocates nothing.
func tlsSeriesOf[S any, B tlsBackend[S]](b B, cache *sync.Map, k tlsKey) *tlsSeries[S] {
	if v, ok := cache.Load(k); ok {
		return v.(*tlsSeries[S])
	}
	ver, cipher := TLSVersionLabel(k.version), TLSCipherLabel(k.cipher)
	ep, router, service := b.levels()
	c := &tlsSeries[S]{}
	if ep && k.ep != "" {
		c.ep = b.tlsSeries(levelEntryPoint, ver, cipher, k.ep)
	}
	if router && k.router != "" {
		c.rt = b.tlsSeries(levelRouter, ver, cipher, k.router, k.service)
	}
	if service && k.service != "" {
		c.svc = b.tlsSeries(levelService, ver, cipher, k.service)
	}
	v, _ := cache.LoadOrStore(k, c)
	return v.(*tlsSeries[S])
}
