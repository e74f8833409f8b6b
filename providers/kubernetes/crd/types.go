package crd

import (
	"github.com/gantry-proxy/gantry/config"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Group and Version are the API group and version of every kind here, as
// Traefik's (traefik.io/v1alpha1), so that objects written for Traefik
// apply unchanged.
const (
	Group   = "traefik.io"
	Version = "v1alpha1"
)

// Object is one decoded custom resource: its identity, the annotations the
// translation reads (the legacy ingress class), and its Spec.
type Object[S any] struct {
	Namespace    string
	Name         string
	GenerateName string
	Annotations  map[string]string
	Spec         S
}

// ID is "<namespace>/<name>", as problems name the object.
func (o *Object[S]) ID() string { return o.Namespace + "/" + o.Name }

// The decoded kinds.
type (
	IngressRoute        = Object[IngressRouteSpec]
	IngressRouteTCP     = Object[IngressRouteTCPSpec]
	IngressRouteUDP     = Object[IngressRouteUDPSpec]
	Middleware          = Object[MiddlewareSpec]
	MiddlewareTCP       = Object[MiddlewareTCPSpec]
	TraefikService      = Object[TraefikServiceSpec]
	TLSOption           = Object[TLSOptionSpec]
	TLSStore            = Object[TLSStoreSpec]
	ServersTransport    = Object[ServersTransportSpec]
	ServersTransportTCP = Object[ServersTransportTCPSpec]
)

// ObjectRef names another resource; Namespace defaults to the referring
// object's.
type ObjectRef struct {
	Name      string `json:"name" crd:"required"`
	Namespace string `json:"namespace,omitempty"`
}

// RouteSet is what the specs of the three IngressRoute kinds share: the
// ingress class (nil: unset; see Options.IngressClass), the entrypoints
// every route is served on, and the routes, each an R.
type RouteSet[R any] struct {
	IngressClassName *string  `json:"ingressClassName,omitempty"`
	EntryPoints      []string `json:"entryPoints,omitempty"`
	Routes           []R      `json:"routes" crd:"required"`
}

// IngressRouteSpec is an HTTP router set: each route becomes one router.
// Source: https://doc.traefik.io/traefik/v3.7/reference/routing-configuration/kubernetes/crd/http/ingressroute/
type IngressRouteSpec struct {
	RouteSet[Route] `json:",inline"`
	TLS             *TLS        `json:"tls,omitempty"`
	ParentRefs      []ObjectRef `json:"parentRefs,omitempty"`
}

// Route is one HTTP router: Match is its rule, Kind is "Rule" or empty.
type Route struct {
	Match         string                      `json:"match" crd:"required"`
	Kind          string                      `json:"kind,omitempty" crd:"enum=Rule"`
	Priority      int                         `json:"priority,omitempty"`
	Syntax        string                      `json:"syntax,omitempty"`
	Services      []Service                   `json:"services,omitempty"`
	Middlewares   []ObjectRef                 `json:"middlewares,omitempty"`
	Observability *config.RouterObservability `json:"observability,omitempty"`
}

// TLS is an IngressRoute's TLS block: the certificate Secret (tls.crt,
// tls.key) in the route's namespace, a TLSOption, the store (only
// "default" exists), a certificate resolver and its domains.
type TLS struct {
	SecretName   string          `json:"secretName,omitempty"`
	Options      *ObjectRef      `json:"options,omitempty"`
	Store        *ObjectRef      `json:"store,omitempty"`
	CertResolver string          `json:"certResolver,omitempty"`
	Domains      []config.Domain `json:"domains,omitempty"`
}

// Service references a Kubernetes Service (Kind "Service" or empty; Port
// required) or a TraefikService (Kind "TraefikService"), or with
// "name@provider" a service of another provider. The load-balancer fields
// apply to Kubernetes Services.
type Service struct {
	Name               string                           `json:"name" crd:"required"`
	Kind               string                           `json:"kind,omitempty" crd:"enum=Service|TraefikService"`
	Namespace          string                           `json:"namespace,omitempty"`
	Middlewares        []ObjectRef                      `json:"middlewares,omitempty"`
	Sticky             *config.Sticky                   `json:"sticky,omitempty"`
	Port               intstr.IntOrString               `json:"port,omitempty"`
	Scheme             string                           `json:"scheme,omitempty"`
	Strategy           string                           `json:"strategy,omitempty" crd:"enum=wrr|p2c|hrw|leasttime|RoundRobin"`
	PassHostHeader     *bool                            `json:"passHostHeader,omitempty"`
	ResponseForwarding *ResponseForwarding              `json:"responseForwarding,omitempty"`
	ServersTransport   string                           `json:"serversTransport,omitempty"`
	Weight             *int                             `json:"weight,omitempty" crd:"min=0"`
	NativeLB           *bool                            `json:"nativeLB,omitempty"`
	NodePortLB         bool                             `json:"nodePortLB,omitempty"`
	HealthCheck        *config.ServerHealthCheck        `json:"healthCheck,omitempty"`
	PassiveHealthCheck *config.PassiveServerHealthCheck `json:"passiveHealthCheck,omitempty"`
}

// ResponseForwarding is a Service's response flushing: FlushInterval is a
// Go duration ("100ms") or a number of seconds.
type ResponseForwarding struct {
	FlushInterval string `json:"flushInterval,omitempty"`
}

// IngressRouteTCPSpec is a TCP router set.
// Source: https://doc.traefik.io/traefik/v3.7/reference/routing-configuration/kubernetes/crd/tcp/ingressroutetcp/
type IngressRouteTCPSpec struct {
	RouteSet[RouteTCP] `json:",inline"`
	TLS                *TLSTCP `json:"tls,omitempty"`
}

// RouteTCP is one TCP router (HostSNI, HostSNIRegexp, ClientIP, ALPN rules).
type RouteTCP struct {
	Match       string       `json:"match" crd:"required"`
	Priority    int          `json:"priority,omitempty"`
	Syntax      string       `json:"syntax,omitempty" crd:"enum=v3|v2"`
	Services    []ServiceTCP `json:"services,omitempty"`
	Middlewares []ObjectRef  `json:"middlewares,omitempty"`
}

// TLSTCP is an IngressRouteTCP's TLS block: an IngressRoute's, and
// Passthrough, which forwards the TLS bytes untouched (no certificate
// needed).
type TLSTCP struct {
	TLS         `json:",inline"`
	Passthrough bool `json:"passthrough,omitempty"`
}

// ServiceTCP is a Kubernetes Service port a TCP route forwards to.
// TerminationDelay (milliseconds) and ProxyProtocol are Traefik's
// deprecated per-service forms of the ServersTransportTCP fields.
type ServiceTCP struct {
	ServicePort      `json:",inline"`
	TerminationDelay *int                  `json:"terminationDelay,omitempty"`
	ProxyProtocol    *config.ProxyProtocol `json:"proxyProtocol,omitempty"`
	ServersTransport string                `json:"serversTransport,omitempty"`
	TLS              bool                  `json:"tls,omitempty"`
}

// IngressRouteUDPSpec is a UDP router set: each route is one router on
// every entrypoint listed.
// Source: https://doc.traefik.io/traefik/v3.7/reference/routing-configuration/kubernetes/crd/udp/ingressrouteudp/
type IngressRouteUDPSpec struct {
	RouteSet[RouteUDP] `json:",inline"`
}

// RouteUDP lists the Services one UDP router balances over.
type RouteUDP struct {
	Services []ServicePort `json:"services,omitempty"`
}

// ServicePort is a Kubernetes Service port a TCP or UDP route forwards to
// (in the Service's namespace, Namespace defaulting to the route's), with
// its weight among the route's services (default 1). NativeLB and
// NodePortLB choose the Service's ClusterIP or node ports over its
// endpoints.
type ServicePort struct {
	Name       string             `json:"name" crd:"required"`
	Namespace  string             `json:"namespace,omitempty"`
	Port       intstr.IntOrString `json:"port" crd:"required"`
	Weight     *int               `json:"weight,omitempty" crd:"min=0"`
	NativeLB   *bool              `json:"nativeLB,omitempty"`
	NodePortLB bool               `json:"nodePortLB,omitempty"`
}
