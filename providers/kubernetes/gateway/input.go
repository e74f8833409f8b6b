package gateway

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// ProviderName is the name the provider's objects are qualified with
// ("web@kubernetesgateway"), Traefik's.
const ProviderName = "kubernetesgateway"

// DefaultControllerName is the GatewayClass controllerName served by
// default (Traefik's).
const DefaultControllerName = "traefik.io/gateway-controller"

// Input is what Translate reads: every object the informers list. Objects
// are shared with the informer caches and never modified.
type Input struct {
	GatewayClasses  []*gwv1.GatewayClass
	Gateways        []*gwv1.Gateway
	HTTPRoutes      []*gwv1.HTTPRoute
	GRPCRoutes      []*gwv1.GRPCRoute
	TLSRoutes       []*gwv1.TLSRoute
	TCPRoutes       []*gwv1.TCPRoute
	UDPRoutes       []*gwv1.UDPRoute
	ReferenceGrants []*gwv1.ReferenceGrant
	// Namespaces give the labels allowedRoutes.namespaces.selector is
	// matched against.
	Namespaces []*corev1.Namespace
}

// EntryPoint is one static entrypoint, for listener mapping.
type EntryPoint struct {
	// Port is the port of the entrypoint's address.
	Port int
	// UDP: the address ends in "/udp".
	UDP bool
	// HTTPTLS: the entrypoint has http.tls (serves TLS on every router);
	// HTTP listeners skip it.
	HTTPTLS bool
}

// Options configure Translate.
type Options struct {
	// ControllerName is the GatewayClass controllerName served;
	// "" means DefaultControllerName.
	ControllerName string
	// EntryPoints are the static entrypoints by name.
	EntryPoints map[string]EntryPoint
	// ExperimentalChannel enables TCPRoute and UDPRoute (Traefik's
	// experimentalChannel option).
	ExperimentalChannel bool
	// Addresses go to every Gateway's status.addresses
	// (statusAddress.ip / hostname / service, resolved by the provider).
	Addresses []gwv1.GatewayStatusAddress
}

// ErrNotFound is returned by a Backends method for a missing object.
var ErrNotFound = errors.New("not found")

// Backend is one port of a Service resolved to ready endpoints.
type Backend struct {
	// Addresses are the ready endpoints as "ip:port" (IPv6 in brackets).
	Addresses []string
	// AppProtocol is the Service port's appProtocol ("" when unset).
	AppProtocol string
	// PortName is the Service port's name.
	PortName string
	// Protocol is the Service port's protocol (TCP, UDP, SCTP).
	Protocol corev1.Protocol
}

// Backends resolves the objects routes refer to. Errors wrapping
// ErrNotFound mean the object does not exist; any other error says why
// it cannot be used.
type Backends interface {
	// Service resolves port of Service namespace/name.
	Service(namespace, name string, port int32) (Backend, error)
	// Certificate returns the PEM certificate chain and key of the
	// kubernetes.io/tls Secret namespace/name.
	Certificate(namespace, name string) (certPEM, keyPEM string, err error)
}

// Result is the outcome of Translate.
type Result struct {
	// Config is the provider's snapshot configuration (never nil).
	Config *config.Configuration
	// Problems name the objects (namespace/name and field) that could not
	// be used, in a deterministic order.
	Problems []providers.Problem
	// Status is the status each object should have.
	Status Status
}

// Status is the status Translate computed, per object. Conditions carry
// ObservedGeneration but no LastTransitionTime: the writer keeps the
// time of an unchanged condition and stamps changed ones.
type Status struct {
	GatewayClasses map[string]GatewayClassStatus
	Gateways       map[types.NamespacedName]gwv1.GatewayStatus
	// Routes are keyed by kind ("HTTPRoute", "GRPCRoute", "TLSRoute",
	// "TCPRoute", "UDPRoute") and object; the parents listed are those of
	// our Gateways only; the writer keeps other controllers' entries.
	Routes map[RouteKey][]gwv1.RouteParentStatus
}

// GatewayClassStatus is a GatewayClass's computed status.
type GatewayClassStatus struct {
	Conditions        []metav1.Condition
	SupportedFeatures []gwv1.SupportedFeature
}

// RouteKey names one route object.
type RouteKey struct {
	Kind string
	types.NamespacedName
}
