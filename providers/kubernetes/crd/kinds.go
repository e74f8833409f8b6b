package crd

import "reflect"

// Kind describes one custom resource kind: its names in the API and the Go
// type of its spec.
type Kind struct {
	Kind     string // "IngressRoute"
	Plural   string // "ingressroutes", the resource name
	Singular string
	spec     reflect.Type
}

// Kinds lists every kind the provider watches, in the order the CRD files
// are written and the informers started.
var Kinds = []Kind{
	{"IngressRoute", "ingressroutes", "ingressroute", reflect.TypeFor[IngressRouteSpec]()},
	{"IngressRouteTCP", "ingressroutetcps", "ingressroutetcp", reflect.TypeFor[IngressRouteTCPSpec]()},
	{"IngressRouteUDP", "ingressrouteudps", "ingressrouteudp", reflect.TypeFor[IngressRouteUDPSpec]()},
	{"Middleware", "middlewares", "middleware", reflect.TypeFor[MiddlewareSpec]()},
	{"MiddlewareTCP", "middlewaretcps", "middlewaretcp", reflect.TypeFor[MiddlewareTCPSpec]()},
	{"ServersTransport", "serverstransports", "serverstransport", reflect.TypeFor[ServersTransportSpec]()},
	{"ServersTransportTCP", "serverstransporttcps", "serverstransporttcp", reflect.TypeFor[ServersTransportTCPSpec]()},
	{"TLSOption", "tlsoptions", "tlsoption", reflect.TypeFor[TLSOptionSpec]()},
	{"TLSStore", "tlsstores", "tlsstore", reflect.TypeFor[TLSStoreSpec]()},
	{"TraefikService", "traefikservices", "traefikservice", reflect.TypeFor[TraefikServiceSpec]()},
}
