package static

import (
	"maps"
	"reflect"
	"slices"
)

// Change kinds (Change.Kind).
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// Change is one difference between two static configurations. Path is the
// section in Traefik's key names: "entryPoints.<name>", "providers.<kind>"
// (file, docker, consulCatalog, consul, providersThrottleDuration),
// "certificatesResolvers.<name>", or a top-level section ("api", "log",
// "log.level", "accessLog", "store"…). Kind is Added, Removed or Changed.
type Change struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
}

// Diff returns what differs between prev and next, one Change per
// entrypoint, provider, certificate resolver and other top-level section
// (log.level apart from the rest of log), sorted by Path. Equal sections
// (reflect.DeepEqual of their decoded values) yield nothing; nil and an
// empty section differ (Traefik treats "api: {}" as enabled).
func Diff(prev, next *Configuration) []Change {
	if prev == nil {
		prev = &Configuration{}
	}
	if next == nil {
		next = &Configuration{}
	}
	var out []Change
	section := func(path string, a, b any) {
		na, nb := isNil(a), isNil(b)
		switch {
		case na && nb:
		case na:
			out = append(out, Change{path, Added})
		case nb:
			out = append(out, Change{path, Removed})
		case !reflect.DeepEqual(a, b):
			out = append(out, Change{path, Changed})
		}
	}
	for _, n := range keys(prev.EntryPoints, next.EntryPoints) {
		section("entryPoints."+n, prev.EntryPoints[n], next.EntryPoints[n])
	}
	pp, np := prev.Providers, next.Providers
	if pp == nil {
		pp = &Providers{}
	}
	if np == nil {
		np = &Providers{}
	}
	section("providers.providersThrottleDuration", pp.ProvidersThrottleDuration, np.ProvidersThrottleDuration)
	section("providers.file", pp.File, np.File)
	section("providers.docker", pp.Docker, np.Docker)
	section("providers.consulCatalog", pp.ConsulCatalog, np.ConsulCatalog)
	section("providers.consul", pp.Consul, np.Consul)
	section("providers.kubernetesIngress", pp.KubernetesIngress, np.KubernetesIngress)
	section("providers.kubernetesCRD", pp.KubernetesCRD, np.KubernetesCRD)
	section("providers.kubernetesIngressNGINX", pp.KubernetesIngressNGINX, np.KubernetesIngressNGINX)
	section("providers.kubernetesGateway", pp.KubernetesGateway, np.KubernetesGateway)
	for _, n := range keys(prev.CertificatesResolvers, next.CertificatesResolvers) {
		section("certificatesResolvers."+n, prev.CertificatesResolvers[n], next.CertificatesResolvers[n])
	}
	section("global", prev.Global, next.Global)
	section("serversTransport", prev.ServersTransport, next.ServersTransport)
	section("api", prev.API, next.API)
	section("ping", prev.Ping, next.Ping)
	pl, nl := prev.Log, next.Log
	if pl == nil {
		pl = &Log{}
	}
	if nl == nil {
		nl = &Log{}
	}
	section("log.level", nonEmpty(pl.Level), nonEmpty(nl.Level))
	lessLevel := func(l Log) Log { l.Level = ""; return l }
	section("log", nonZero(lessLevel(*pl)), nonZero(lessLevel(*nl)))
	section("accessLog", prev.AccessLog, next.AccessLog)
	section("metrics", prev.Metrics, next.Metrics)
	section("tracing", prev.Tracing, next.Tracing)
	section("core", prev.Core, next.Core)
	section("store", prev.Store, next.Store)
	section("cluster", prev.Cluster, next.Cluster)
	section("dynamicEntryPoints", prev.DynamicEntryPoints, next.DynamicEntryPoints)
	slices.SortFunc(out, func(a, b Change) int {
		if a.Path < b.Path {
			return -1
		}
		if a.Path > b.Path {
			return 1
		}
		return 0
	})
	return out
}

// keys returns the names present in a or b, sorted.
func keys[V any](a, b map[string]V) []string {
	seen := maps.Clone(a)
	if seen == nil {
		seen = map[string]V{}
	}
	maps.Copy(seen, b)
	return slices.Sorted(maps.Keys(seen))
}

// isNil reports whether v is nil or a nil pointer.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	r := reflect.ValueOf(v)
	return r.Kind() == reflect.Pointer && r.IsNil()
}

// nonEmpty returns s as a value that isNil when s is "".
func nonEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nonZero returns l as a value that isNil when l is the zero Log.
func nonZero(l Log) any {
	if l == (Log{}) {
		return nil
	}
	return l
}
