package k8s

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	netv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Object is what every kind's object is: a runtime.Object with metadata.
type Object interface {
	runtime.Object
	metav1.Object
}

// Kind is one resource of the minimal scheme: T its object type, L its
// list type, GV its group version (one of groupVersions), Resource its
// plural name. Builtin kinds ask the API server for protobuf, as
// client-go's generated clients do; custom resources are JSON only.
type Kind[T Object, L runtime.Object] struct {
	GV       schema.GroupVersion
	Resource string
	New      func() T
	NewList  func() L
	Builtin  bool
}

// The kinds Gantry reads or writes.
var (
	Services       = Kind[*corev1.Service, *corev1.ServiceList]{corev1.SchemeGroupVersion, "services", newOf[corev1.Service], newOf[corev1.ServiceList], true}
	Secrets        = Kind[*corev1.Secret, *corev1.SecretList]{corev1.SchemeGroupVersion, "secrets", newOf[corev1.Secret], newOf[corev1.SecretList], true}
	ConfigMaps     = Kind[*corev1.ConfigMap, *corev1.ConfigMapList]{corev1.SchemeGroupVersion, "configmaps", newOf[corev1.ConfigMap], newOf[corev1.ConfigMapList], true}
	Namespaces     = Kind[*corev1.Namespace, *corev1.NamespaceList]{corev1.SchemeGroupVersion, "namespaces", newOf[corev1.Namespace], newOf[corev1.NamespaceList], true}
	EndpointSlices = Kind[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList]{discoveryv1.SchemeGroupVersion, "endpointslices", newOf[discoveryv1.EndpointSlice], newOf[discoveryv1.EndpointSliceList], true}
	Ingresses      = Kind[*netv1.Ingress, *netv1.IngressList]{netv1.SchemeGroupVersion, "ingresses", newOf[netv1.Ingress], newOf[netv1.IngressList], true}
	IngressClasses = Kind[*netv1.IngressClass, *netv1.IngressClassList]{netv1.SchemeGroupVersion, "ingressclasses", newOf[netv1.IngressClass], newOf[netv1.IngressClassList], true}
	Leases         = Kind[*coordinationv1.Lease, *coordinationv1.LeaseList]{coordinationv1.SchemeGroupVersion, "leases", newOf[coordinationv1.Lease], newOf[coordinationv1.LeaseList], true}

	GatewayClasses  = Kind[*gwv1.GatewayClass, *gwv1.GatewayClassList]{gwv1.SchemeGroupVersion, "gatewayclasses", newOf[gwv1.GatewayClass], newOf[gwv1.GatewayClassList], false}
	Gateways        = Kind[*gwv1.Gateway, *gwv1.GatewayList]{gwv1.SchemeGroupVersion, "gateways", newOf[gwv1.Gateway], newOf[gwv1.GatewayList], false}
	HTTPRoutes      = Kind[*gwv1.HTTPRoute, *gwv1.HTTPRouteList]{gwv1.SchemeGroupVersion, "httproutes", newOf[gwv1.HTTPRoute], newOf[gwv1.HTTPRouteList], false}
	GRPCRoutes      = Kind[*gwv1.GRPCRoute, *gwv1.GRPCRouteList]{gwv1.SchemeGroupVersion, "grpcroutes", newOf[gwv1.GRPCRoute], newOf[gwv1.GRPCRouteList], false}
	TLSRoutes       = Kind[*gwv1.TLSRoute, *gwv1.TLSRouteList]{gwv1.SchemeGroupVersion, "tlsroutes", newOf[gwv1.TLSRoute], newOf[gwv1.TLSRouteList], false}
	TCPRoutes       = Kind[*gwv1.TCPRoute, *gwv1.TCPRouteList]{gwv1.SchemeGroupVersion, "tcproutes", newOf[gwv1.TCPRoute], newOf[gwv1.TCPRouteList], false}
	UDPRoutes       = Kind[*gwv1.UDPRoute, *gwv1.UDPRouteList]{gwv1.SchemeGroupVersion, "udproutes", newOf[gwv1.UDPRoute], newOf[gwv1.UDPRouteList], false}
	ReferenceGrants = Kind[*gwv1.ReferenceGrant, *gwv1.ReferenceGrantList]{gwv1.SchemeGroupVersion, "referencegrants", newOf[gwv1.ReferenceGrant], newOf[gwv1.ReferenceGrantList], false}
)

func newOf[T any]() *T { return new(T) }

// Client returns the typed client of k in namespace ns ("" for all
// namespaces or a cluster-scoped kind) over c.
func (k Kind[T, L]) Client(c *Client, ns string) *TypedClient[T, L] {
	return &TypedClient[T, L]{rc: c.rest[k.GV], params: c.codecs.params, ns: ns, kind: k}
}

// Informer returns f's informer of k, making it the first time (as a
// client-go informer factory does: one informer per kind, indexed by
// namespace, list and watch requests changed by f's tweak, objects
// passed through StripManagedFields).
func (k Kind[T, L]) Informer(f *Informers) cache.SharedIndexInformer {
	return f.informerFor(k.GV.WithResource(k.Resource).String(), func() cache.SharedIndexInformer {
		cl := k.Client(f.client, f.ns)
		list := func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return cl.List(ctx, o) }
		return f.newInformer(cl, k.New(), k.GV.WithResource(k.Resource).String(), list, cl.Watch)
	})
}
