package k8s

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// Scope is what a provider watches: Namespaces (empty: all) and, for its
// own kinds (Ingress, IngressRoute, ...), a LabelSelector (Kubernetes
// label selector syntax, "" for all). Services, EndpointSlices and
// Secrets are read in the same namespaces without the selector.
type Scope struct {
	Namespaces    []string
	LabelSelector string
}

// Check parses the label selector, naming it in the error.
func (s Scope) Check() error {
	if _, err := labels.Parse(s.LabelSelector); err != nil {
		return fmt.Errorf("labelSelector %q: %w", s.LabelSelector, err)
	}
	return nil
}

// InformerNamespaces returns the namespaces to make informers for, sorted
// and without repeats: "" (all) when none is configured.
func (s Scope) InformerNamespaces() []string {
	if len(s.Namespaces) == 0 {
		return []string{metav1.NamespaceAll}
	}
	ns := slices.Clone(s.Namespaces)
	slices.Sort(ns)
	return slices.Compact(ns)
}

// Watches reports whether namespace ns is in scope.
func (s Scope) Watches(ns string) bool {
	return len(s.Namespaces) == 0 || slices.Contains(s.Namespaces, ns)
}

// Informers returns one informer factory per namespace of s, reading
// through c. With selected, list and watch requests carry
// s.LabelSelector (for the provider's own kinds); tweak, when not nil,
// changes them further (e.g. Traefik's "owner!=helm" for Secrets). Every
// object has its managedFields removed before it is cached.
func (s Scope) Informers(c *Client, selected bool, tweak func(*metav1.ListOptions)) []*Informers {
	var fs []*Informers
	for _, ns := range s.InformerNamespaces() {
		var t func(*metav1.ListOptions)
		if selected && s.LabelSelector != "" || tweak != nil {
			sel := s.LabelSelector
			t = func(o *metav1.ListOptions) {
				if selected {
					o.LabelSelector = sel
				}
				if tweak != nil {
					tweak(o)
				}
			}
		}
		fs = append(fs, NewInformers(c, ns, t))
	}
	return fs
}

// StripManagedFields drops metadata.managedFields (server-side apply
// bookkeeping, often larger than the object) from objects entering an
// informer cache. Objects without metadata pass unchanged.
func StripManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil {
		a.SetManagedFields(nil)
	}
	if s, ok := obj.(*corev1.Secret); ok {
		dropOversizeSecret(s)
	}
	return obj, nil
}

// Lister reads objects of one kind from the informer caches of every
// namespace of a Scope (one informer for all namespaces, or one per
// namespace).
type Lister[T any] struct {
	indexers []cache.Indexer
}

// NewLister reads from the caches of infs, one per namespace factory.
func NewLister[T any](infs ...cache.SharedIndexInformer) Lister[T] {
	l := Lister[T]{}
	for _, inf := range infs {
		l.indexers = append(l.indexers, inf.GetIndexer())
	}
	return l
}

// ListerOf reads from indexers (tests fill a cache.Indexer directly).
func ListerOf[T any](idx ...cache.Indexer) Lister[T] { return Lister[T]{indexers: idx} }

// List returns every cached object.
func (l Lister[T]) List() []T {
	var out []T
	for _, idx := range l.indexers {
		for _, o := range idx.List() {
			if t, ok := o.(T); ok {
				out = append(out, t)
			}
		}
	}
	return out
}

// Get returns the cached object ns/name (cluster-scoped objects: ns "").
func (l Lister[T]) Get(ns, name string) (T, bool) {
	key := name
	if ns != "" {
		key = ns + "/" + name
	}
	for _, idx := range l.indexers {
		if o, ok, err := idx.GetByKey(key); err == nil && ok {
			if t, ok := o.(T); ok {
				return t, true
			}
		}
	}
	var zero T
	return zero, false
}

// ByIndex returns the cached objects whose index idx has value v.
func (l Lister[T]) ByIndex(idx, v string) []T {
	var out []T
	for _, ix := range l.indexers {
		objs, err := ix.ByIndex(idx, v)
		if err != nil {
			continue
		}
		for _, o := range objs {
			if t, ok := o.(T); ok {
				out = append(out, t)
			}
		}
	}
	return out
}

// ServiceNameIndex indexes EndpointSlices by "namespace/service" (their
// kubernetes.io/service-name label).
const ServiceNameIndex = "serviceName"

// ServiceNameIndexers holds the index function of ServiceNameIndex.
var ServiceNameIndexers = cache.Indexers{ServiceNameIndex: func(obj any) ([]string, error) {
	es, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return nil, nil
	}
	svc, ok := es.Labels[discoveryv1.LabelServiceName]
	if !ok || svc == "" {
		return nil, nil
	}
	return []string{es.Namespace + "/" + svc}, nil
}}
