package k8s

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// Informers makes and runs the informers of one namespace ("" for all
// namespaces, and for cluster-scoped kinds): the informer factory of
// client-go's informers package, for the kinds of the minimal scheme
// (Kind.Informer) and for custom resources read as unstructured objects
// (Dynamic). It implements Factory: Start runs the informers made so far,
// Shutdown waits for them to stop after Start's channel closed.
type Informers struct {
	client *Client
	ns     string
	tweak  func(*metav1.ListOptions)

	mu      sync.Mutex
	infs    map[string]cache.SharedIndexInformer // by group/version, resource=...
	started map[string]bool
	down    bool
	wg      sync.WaitGroup
}

// NewInformers returns the informers of namespace ns read through c;
// tweak, when not nil, changes every list and watch request (a label or
// field selector).
func NewInformers(c *Client, ns string, tweak func(*metav1.ListOptions)) *Informers {
	return &Informers{client: c, ns: ns, tweak: tweak, infs: map[string]cache.SharedIndexInformer{}, started: map[string]bool{}}
}

// informerFor returns the informer under key, made by mk the first time.
func (f *Informers) informerFor(key string, mk func() cache.SharedIndexInformer) cache.SharedIndexInformer {
	f.mu.Lock()
	defer f.mu.Unlock()
	if inf, ok := f.infs[key]; ok {
		return inf
	}
	inf := mk()
	f.infs[key] = inf
	return inf
}

// newInformer makes an informer of obj's kind listing and watching with
// list and watch (after f's tweak), described as desc in client-go's
// logs; client is passed to client-go to tell whether it supports
// watch-list semantics.
func (f *Informers) newInformer(client any, obj runtime.Object, desc string,
	list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			if f.tweak != nil {
				f.tweak(&o)
			}
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			if f.tweak != nil {
				f.tweak(&o)
			}
			return watchFn(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, client), obj, cache.SharedIndexInformerOptions{
		Indexers:          cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		ObjectDescription: desc,
	})
	_ = inf.SetTransform(StripManagedFields) // fails only once started
	return inf
}

// Dynamic returns f's informer of the custom resource gvr, read through
// dc as unstructured objects.
func (f *Informers) Dynamic(dc dynamic.Interface, gvr schema.GroupVersionResource) cache.SharedIndexInformer {
	return f.informerFor("dynamic "+gvr.String(), func() cache.SharedIndexInformer {
		r := dc.Resource(gvr).Namespace(f.ns)
		list := func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return r.List(ctx, o) }
		return f.newInformer(dc, &unstructured.Unstructured{}, gvr.String(), list, r.Watch)
	})
}

// Start runs every informer made so far and not yet running until stop
// is closed. After Shutdown it does nothing.
func (f *Informers) Start(stop <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return
	}
	for key, inf := range f.infs {
		if !f.started[key] {
			f.started[key] = true
			f.wg.Go(func() { inf.Run(stop) })
		}
	}
}

// Shutdown stops Start from running more informers and waits for those
// it ran to return (they stop when Start's channel is closed).
func (f *Informers) Shutdown() {
	f.mu.Lock()
	f.down = true
	f.mu.Unlock()
	f.wg.Wait()
}
