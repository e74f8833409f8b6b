package gateway

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gantry-proxy/gantry/config"
)

// refError is why a backendRef cannot be used: the route's ResolvedRefs
// condition gets Reason, and the backend's share of requests gets 500.
type refError struct {
	reason gwv1.RouteConditionReason
	msg    string
}

func (e *refError) Error() string { return e.msg }

// CRDProvider is the provider whose objects ExtensionRef filters and
// TraefikService backendRefs name (Traefik's kubernetesCRD provider,
// objects named "<namespace>-<name>").
const CRDProvider = "kubernetescrd"

// backendTarget checks a backendRef's kind, namespace and grant. It
// returns the namespace, and for a TraefikService the qualified service
// name to use as is.
func (t *translator) backendTarget(routeKind, routeNS string, ref gwv1.BackendObjectReference) (ns, traefikService string, err *refError) {
	ns = string(ptrOr(ref.Namespace, gwv1.Namespace(routeNS)))
	group, kind := string(ptrOr(ref.Group, "")), string(ptrOr(ref.Kind, "Service"))
	switch {
	case group == "" && kind == "Service":
	case group == "traefik.io" && kind == "TraefikService":
		if ns != routeNS {
			return "", "", &refError{gwv1.RouteReasonRefNotPermitted, fmt.Sprintf("TraefikService %s/%s is in another namespace", ns, ref.Name)}
		}
		return ns, objName(ns, string(ref.Name)) + "@" + CRDProvider, nil
	default:
		return "", "", &refError{gwv1.RouteReasonInvalidKind, fmt.Sprintf("backendRef %s/%s: kind %s/%s is not supported", ns, ref.Name, group, kind)}
	}
	if ns != routeNS && !t.granted(gwv1.GroupName, routeKind, routeNS, group, kind, ns, string(ref.Name)) {
		return "", "", &refError{gwv1.RouteReasonRefNotPermitted, fmt.Sprintf("backendRef %s/%s is in another namespace and no ReferenceGrant allows it", ns, ref.Name)}
	}
	if ref.Port == nil {
		return "", "", &refError{gwv1.RouteReasonUnsupportedValue, fmt.Sprintf("backendRef %s/%s: port is required for a Service", ns, ref.Name)}
	}
	return ns, "", nil
}

// resolve looks the Service port up.
func (t *translator) resolve(ns string, ref gwv1.BackendObjectReference) (Backend, *refError) {
	b, err := t.be.Service(ns, string(ref.Name), int32(*ref.Port))
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return b, &refError{gwv1.RouteReasonBackendNotFound, fmt.Sprintf("backendRef %s/%s port %d: %v", ns, ref.Name, *ref.Port, err)}
		}
		return b, &refError{gwv1.RouteReasonBackendNotFound, fmt.Sprintf("backendRef %s/%s port %d: %v", ns, ref.Name, *ref.Port, err)}
	}
	return b, nil
}

// httpScheme is the scheme Gantry speaks to a Service port: its
// appProtocol (kubernetes.io/h2c → h2c, kubernetes.io/ws and http → http,
// kubernetes.io/wss and https → https), else https for port 443 or a port
// named https*, else def ("http", or "h2c" for gRPC), as Traefik does.
func httpScheme(b Backend, port int32, def string) (string, *refError) {
	if b.Protocol != "" && b.Protocol != corev1.ProtocolTCP {
		return "", &refError{gwv1.RouteReasonUnsupportedProtocol, fmt.Sprintf("Service port protocol %s is not TCP", b.Protocol)}
	}
	switch ap := strings.ToLower(b.AppProtocol); ap {
	case "":
	case "kubernetes.io/h2c", "h2c":
		return "h2c", nil
	case "kubernetes.io/ws", "http":
		return "http", nil
	case "kubernetes.io/wss", "https":
		return "https", nil
	default:
		return "", &refError{gwv1.RouteReasonUnsupportedProtocol, fmt.Sprintf("appProtocol %q is not supported", b.AppProtocol)}
	}
	if port == 443 || strings.HasPrefix(b.PortName, "https") {
		return "https", nil
	}
	return def, nil
}

// httpService returns the name of the loadBalancer service for an HTTP or
// gRPC backendRef, adding it to the configuration. transport ("" for
// none) is the serversTransport the service uses (rule timeouts).
func (t *translator) httpService(routeKind, routeNS string, ref gwv1.BackendObjectReference, defScheme, transport string) (string, *refError) {
	ns, ts, rerr := t.backendTarget(routeKind, routeNS, ref)
	if rerr != nil {
		return "", rerr
	}
	if ts != "" {
		return ts, nil
	}
	b, rerr := t.resolve(ns, ref)
	if rerr != nil {
		return "", rerr
	}
	scheme, rerr := httpScheme(b, int32(*ref.Port), defScheme)
	if rerr != nil {
		return "", rerr
	}
	name := objName("svc", ns, string(ref.Name), strconv.Itoa(int(*ref.Port)), scheme)
	if transport != "" {
		name = objName(name, transport)
	}
	if _, ok := t.conf.HTTP.Services[name]; ok {
		return name, nil
	}
	lb := &config.ServersLoadBalancer{ServersTransport: transport}
	for _, a := range b.Addresses {
		lb.Servers = append(lb.Servers, config.Server{URL: scheme + "://" + a})
	}
	t.conf.HTTP.Services[name] = &config.Service{LoadBalancer: lb}
	return name, nil
}

// l4Service returns the TCP or UDP service name for a backendRef.
func (t *translator) l4Service(routeKind, routeNS string, ref gwv1.BackendObjectReference, udp bool) (string, *refError) {
	ns, ts, rerr := t.backendTarget(routeKind, routeNS, ref)
	if rerr != nil {
		return "", rerr
	}
	if ts != "" {
		return "", &refError{gwv1.RouteReasonInvalidKind, "a TraefikService is an HTTP service"}
	}
	b, rerr := t.resolve(ns, ref)
	if rerr != nil {
		return "", rerr
	}
	want := corev1.ProtocolTCP
	if udp {
		want = corev1.ProtocolUDP
	}
	if b.Protocol != "" && b.Protocol != want {
		return "", &refError{gwv1.RouteReasonUnsupportedProtocol, fmt.Sprintf("backendRef %s/%s port %d is %s, not %s", ns, ref.Name, *ref.Port, b.Protocol, want)}
	}
	name := objName("svc", ns, string(ref.Name), strconv.Itoa(int(*ref.Port)))
	if udp {
		u := t.conf.EnsureUDP()
		if _, ok := u.Services[name]; !ok {
			servers := serversAt(b.Addresses, func(a string) config.UDPServer { return config.UDPServer{Address: a} })
			u.Services[name] = &config.UDPService{LoadBalancer: &config.UDPServersLoadBalancer{Servers: servers}}
		}
		return name, nil
	}
	tc := t.conf.EnsureTCP()
	if _, ok := tc.Services[name]; !ok {
		servers := serversAt(b.Addresses, func(a string) config.TCPServer { return config.TCPServer{Address: a} })
		tc.Services[name] = &config.TCPService{LoadBalancer: &config.TCPServersLoadBalancer{Servers: servers}}
	}
	return name, nil
}

// serversAt is one TCP or UDP server per address, in order.
func serversAt[S any](addrs []string, server func(string) S) []S {
	var out []S
	for _, a := range addrs {
		out = append(out, server(a))
	}
	return out
}
