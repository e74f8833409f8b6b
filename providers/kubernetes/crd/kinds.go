package crd

import (
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Kind describes one custom resource kind: its names in the API, the Go
// type of its spec, and where Decode puts its objects.
type Kind struct {
	Kind     string // "IngressRoute"
	Plural   string // "ingressroutes", the resource name
	Singular string
	spec     reflect.Type
	decode   func(*unstructured.Unstructured, *Input) error
}

// kind describes the kind whose spec is S and whose objects go to the
// Input list dst returns.
func kind[S any](name, plural, singular string, dst func(*Input) *[]*Object[S]) Kind {
	return Kind{name, plural, singular, reflect.TypeFor[S](), func(u *unstructured.Unstructured, in *Input) error {
		return decodeInto(u, dst(in))
	}}
}

// Kinds lists every kind the provider watches, in the order the CRD files
// are written and the informers started.
var Kinds = []Kind{
	kind("IngressRoute", "ingressroutes", "ingressroute", func(in *Input) *[]*IngressRoute { return &in.IngressRoutes }),
	kind("IngressRouteTCP", "ingressroutetcps", "ingressroutetcp", func(in *Input) *[]*IngressRouteTCP { return &in.IngressRouteTCPs }),
	kind("IngressRouteUDP", "ingressrouteudps", "ingressrouteudp", func(in *Input) *[]*IngressRouteUDP { return &in.IngressRouteUDPs }),
	kind("Middleware", "middlewares", "middleware", func(in *Input) *[]*Middleware { return &in.Middlewares }),
	kind("MiddlewareTCP", "middlewaretcps", "middlewaretcp", func(in *Input) *[]*MiddlewareTCP { return &in.MiddlewareTCPs }),
	kind("ServersTransport", "serverstransports", "serverstransport", func(in *Input) *[]*ServersTransport { return &in.ServersTransports }),
	kind("ServersTransportTCP", "serverstransporttcps", "serverstransporttcp", func(in *Input) *[]*ServersTransportTCP { return &in.ServersTransportTCPs }),
	kind("TLSOption", "tlsoptions", "tlsoption", func(in *Input) *[]*TLSOption { return &in.TLSOptions }),
	kind("TLSStore", "tlsstores", "tlsstore", func(in *Input) *[]*TLSStore { return &in.TLSStores }),
	kind("TraefikService", "traefikservices", "traefikservice", func(in *Input) *[]*TraefikService { return &in.TraefikServices }),
}
