// Package crd is the kubernetesCRD provider: Traefik v3.7's custom resources
// (group traefik.io, version v1alpha1: IngressRoute, IngressRouteTCP,
// IngressRouteUDP, Middleware, MiddlewareTCP, TraefikService, TLSOption,
// TLSStore, ServersTransport, ServersTransportTCP) translated into one
// config.Configuration snapshot, published under the provider name
// "kubernetescrd".
//
// Objects are read with dynamic informers and decoded from their
// unstructured form into the typed specs of this package (Decode): no
// generated clientset is needed, the same types produce the CustomResourceDefinitions
// in examples/kubernetes/crds (schema_test.go generates and checks them),
// and a field the API server accepted but these types cannot hold is a
// Problem naming the object and field instead of a failed informer.
//
// Translate is pure: it reads the decoded objects and a Cluster (Services,
// EndpointSlices, Secrets, ConfigMaps) and returns the snapshot and its
// Problems. Names follow Traefik's, so that references written for Traefik
// resolve unchanged: an IngressRoute route is the router
// "<namespace>-<name>-<first 10 bytes of sha256(match), hex>", a Middleware
// is "<namespace>-<name>" (referenced from other providers as
// "<namespace>-<name>@kubernetescrd"), a Kubernetes Service load balancer
// is "<namespace>-<name>-<port>". A broken object (or route) is left out with
// a Problem whose Source is "<Kind> <namespace>/<name>" and whose message
// starts with the field path; everything else keeps routing.
//
// Source: https://doc.traefik.io/traefik/v3.7/reference/routing-configuration/kubernetes/crd/
package crd
