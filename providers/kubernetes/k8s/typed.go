package k8s

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// TypedClient is the client of one kind in one namespace (or of a
// cluster-scoped kind): the requests of client-go's generated clients
// (gentype), whose package is not linked because it imports client-go's
// fake-client machinery (structured-merge-diff, kube-openapi). Errors are
// the API server's (apierrors.IsNotFound, IsConflict, ...) or the
// transport's.
type TypedClient[T Object, L runtime.Object] struct {
	rc     rest.Interface
	params runtime.ParameterCodec
	ns     string
	kind   Kind[T, L]
}

// request starts a request of verb on the client's resource.
func (c *TypedClient[T, L]) request(verb string) *rest.Request {
	return c.rc.Verb(verb).UseProtobufAsDefaultIfPreferred(c.kind.Builtin).
		NamespaceIfScoped(c.ns, c.ns != "").Resource(c.kind.Resource)
}

// Get returns the object called name.
func (c *TypedClient[T, L]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	out := c.kind.New()
	err := c.request("GET").Name(name).VersionedParams(&opts, c.params).Do(ctx).Into(out)
	return out, err
}

// List returns the objects opts selects (opts.TimeoutSeconds bounds the
// request).
func (c *TypedClient[T, L]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	out := c.kind.NewList()
	err := c.request("GET").VersionedParams(&opts, c.params).Timeout(timeoutOf(opts)).Do(ctx).Into(out)
	return out, err
}

// Watch watches the objects opts selects (opts.TimeoutSeconds bounds the
// watch).
func (c *TypedClient[T, L]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return c.request("GET").VersionedParams(&opts, c.params).Timeout(timeoutOf(opts)).Watch(ctx)
}

// Create creates obj and returns the server's copy.
func (c *TypedClient[T, L]) Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error) {
	out := c.kind.New()
	err := c.request("POST").VersionedParams(&opts, c.params).Body(obj).Do(ctx).Into(out)
	return out, err
}

// Update replaces obj (its resourceVersion is the precondition) and
// returns the server's copy.
func (c *TypedClient[T, L]) Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	out := c.kind.New()
	err := c.request("PUT").Name(obj.GetName()).VersionedParams(&opts, c.params).Body(obj).Do(ctx).Into(out)
	return out, err
}

// UpdateStatus replaces obj's status subresource and returns the
// server's copy.
func (c *TypedClient[T, L]) UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	out := c.kind.New()
	err := c.request("PUT").Name(obj.GetName()).SubResource("status").VersionedParams(&opts, c.params).Body(obj).Do(ctx).Into(out)
	return out, err
}

// Delete deletes the object called name.
func (c *TypedClient[T, L]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return c.request("DELETE").Name(name).Body(&opts).Do(ctx).Error()
}

// timeoutOf is opts.TimeoutSeconds as a request timeout (0: none).
func timeoutOf(opts metav1.ListOptions) time.Duration {
	if opts.TimeoutSeconds == nil {
		return 0
	}
	return time.Duration(*opts.TimeoutSeconds) * time.Second
}
