package k8s

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/gantry-proxy/gantry/config"
)

// PortRef names a Service port by Number, or by Name when Number is 0
// (networking.k8s.io/v1 ServiceBackendPort, Traefik's CRD port).
type PortRef struct {
	Name   string
	Number int32
}

// String is the number, or the name.
func (p PortRef) String() string {
	if p.Number != 0 {
		return strconv.Itoa(int(p.Number))
	}
	return p.Name
}

// Backends turns Services and their EndpointSlices into servers.
type Backends struct {
	Services Lister[*corev1.Service]
	// Slices must be indexed by ServiceNameIndex (Watcher.WatchEndpointSlices).
	Slices Lister[*discoveryv1.EndpointSlice]
	// AllowExternalName admits ExternalName Services
	// (allowExternalNameServices).
	AllowExternalName bool
}

// Target is a resolved Service port: the Service, its port, the
// addresses ("host:port") new requests may go to, and Fenced: those of
// terminating endpoints that still serve, which keep their sticky
// sessions but get no new one (Servers marks them config.Server.Fenced).
type Target struct {
	Service *corev1.Service
	Port    corev1.ServicePort
	Addrs   []string
	Fenced  []string
}

// Empty reports whether t has no address at all, fenced ones included.
func (t Target) Empty() bool { return len(t.Addrs) == 0 && len(t.Fenced) == 0 }

// Resolve finds Service ns/name and its port, and the addresses behind it
// (see the package doc): with nativeLB the ClusterIP, for an ExternalName
// Service its name, else every serving, non-terminating endpoint of its
// EndpointSlices (serving and terminating ones in Fenced). No address is not an error (allowEmptyServices decides);
// an unknown Service or port, a refused ExternalName Service and a
// headless or IP-less Service with nativeLB are.
func (b Backends) Resolve(ns, name string, port PortRef, nativeLB bool) (Target, error) {
	svc, ok := b.Services.Get(ns, name)
	if !ok {
		return Target{}, fmt.Errorf("service %s/%s not found", ns, name)
	}
	t := Target{Service: svc}
	found := false
	for _, p := range svc.Spec.Ports {
		if (port.Number != 0 && p.Port == port.Number) || (port.Number == 0 && port.Name != "" && p.Name == port.Name) {
			t.Port, found = p, true
			break
		}
	}
	if !found {
		return Target{}, fmt.Errorf("service %s/%s has no port %s", ns, name, port)
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		if !b.AllowExternalName {
			return Target{}, fmt.Errorf("service %s/%s is of type ExternalName, not allowed (allowExternalNameServices is false)", ns, name)
		}
		t.Addrs = []string{net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(t.Port.Port)))}
		return t, nil
	}
	if nativeLB {
		ip := svc.Spec.ClusterIP
		if ip == corev1.ClusterIPNone {
			return Target{}, fmt.Errorf("service %s/%s is headless (clusterIP None): nativeLB needs a ClusterIP", ns, name)
		}
		if ip == "" {
			return Target{}, fmt.Errorf("service %s/%s has no clusterIP yet: nativeLB needs one", ns, name)
		}
		t.Addrs = []string{net.JoinHostPort(ip, strconv.Itoa(int(t.Port.Port)))}
		return t, nil
	}
	seen := map[string]bool{}
	for _, es := range b.Slices.ByIndex(ServiceNameIndex, ns+"/"+name) {
		var slicePort int32
		for _, p := range es.Ports {
			if p.Port != nil && (p.Name == nil && t.Port.Name == "" || p.Name != nil && *p.Name == t.Port.Name) {
				slicePort = *p.Port
				break
			}
		}
		if slicePort == 0 {
			continue
		}
		for _, ep := range es.Endpoints {
			routable, fenced := Routable(ep.Conditions), Fenced(ep.Conditions)
			if !routable && !fenced {
				continue
			}
			for _, a := range ep.Addresses {
				hp := net.JoinHostPort(a, strconv.Itoa(int(slicePort)))
				if seen[hp] {
					continue
				}
				seen[hp] = true
				if routable {
					t.Addrs = append(t.Addrs, hp)
				} else {
					t.Fenced = append(t.Fenced, hp)
				}
			}
		}
	}
	return t, nil
}

// Routable reports whether an endpoint gets new requests: serving (nil
// means true, per discovery.k8s.io/v1) and not terminating. A terminating
// endpoint that still serves finishes what it has but gets nothing new.
func Routable(c discoveryv1.EndpointConditions) bool {
	if c.Terminating != nil && *c.Terminating {
		return false
	}
	if c.Serving != nil {
		return *c.Serving
	}
	return c.Ready == nil || *c.Ready
}

// Fenced reports whether an endpoint is terminating but still serving
// (discovery.k8s.io/v1 conditions terminating=true, serving=true; nil
// serving means true): it keeps the sticky sessions it has until it is
// gone and gets no new one, as Traefik's kubernetes providers mark it.
func Fenced(c discoveryv1.EndpointConditions) bool {
	return c.Terminating != nil && *c.Terminating && (c.Serving == nil || *c.Serving)
}

// Scheme is Traefik's default server scheme for a Service port: "https"
// for port 443 or a port name starting with "https", else "http".
func Scheme(p corev1.ServicePort) string {
	if p.Port == 443 || strings.HasPrefix(p.Name, "https") {
		return "https"
	}
	return "http"
}

// Servers returns one server per address of t, with scheme ("" means
// Scheme(t.Port)), then one fenced server per address of t.Fenced.
func (t Target) Servers(scheme string) []config.Server {
	if scheme == "" {
		scheme = Scheme(t.Port)
	}
	out := make([]config.Server, 0, len(t.Addrs)+len(t.Fenced))
	for _, a := range t.Addrs {
		out = append(out, config.Server{URL: scheme + "://" + a})
	}
	for _, a := range t.Fenced {
		out = append(out, config.Server{URL: scheme + "://" + a, Fenced: true})
	}
	return out
}
