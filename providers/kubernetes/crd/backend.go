package crd

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// backend is a Kubernetes Service port resolved for one reference.
type backend struct {
	svc  *corev1.Service
	port corev1.ServicePort
}

// lookupService finds Service namespace/name and the port a reference
// names (its number, or its name). An ExternalName Service needs
// allowExternalNameServices and may be given any port number.
func (b *builder) lookupService(namespace, name string, port intstr.IntOrString) (backend, error) {
	if strings.Contains(name, "@") {
		return backend{}, fmt.Errorf("service %q: a Kubernetes Service name cannot hold '@' (for another provider's service use kind TraefikService)", name)
	}
	svc, ok := b.cl.Service(namespace, name)
	if !ok {
		return backend{}, fmt.Errorf("service %s/%s not found", namespace, name)
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName && !b.opts.AllowExternalNameServices {
		return backend{}, fmt.Errorf("service %s/%s is of type ExternalName: refused (providers.kubernetesCRD.allowExternalNameServices is false)", namespace, name)
	}
	if (port.Type == intstr.Int && port.IntVal == 0) || (port.Type == intstr.String && port.StrVal == "") {
		return backend{}, errors.New("port is required for a Kubernetes Service")
	}
	for _, p := range svc.Spec.Ports {
		if (port.Type == intstr.Int && port.IntVal == p.Port) || (port.Type == intstr.String && port.StrVal == p.Name) {
			return backend{svc: svc, port: p}, nil
		}
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName && port.Type == intstr.Int {
		return backend{svc: svc, port: corev1.ServicePort{Port: port.IntVal}}, nil
	}
	return backend{}, fmt.Errorf("service %s/%s has no port %s", namespace, name, port.String())
}

// addresses returns the "host:port" of the servers behind be: the
// ExternalName host, the ClusterIP with nativeLB, or else every address of
// the endpoints of the Service's EndpointSlices that is ready (serving,
// and not terminating: a terminating endpoint gets no new connection),
// each once, in slice order.
func (b *builder) addresses(be backend, nativeLB bool) ([]string, error) {
	svc := be.svc
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return []string{net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(be.port.Port)))}, nil
	}
	if nativeLB {
		switch svc.Spec.ClusterIP {
		case "", corev1.ClusterIPNone:
			return nil, fmt.Errorf("nativeLB: service %s/%s has no ClusterIP (headless)", svc.Namespace, svc.Name)
		}
		return []string{net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(be.port.Port)))}, nil
	}
	seen := map[string]bool{}
	var out []string
	for _, slice := range b.cl.EndpointSlices(svc.Namespace, svc.Name) {
		var port int32
		for _, p := range slice.Ports {
			if p.Name != nil && *p.Name == be.port.Name && p.Port != nil {
				port = *p.Port
				break
			}
		}
		if port == 0 {
			continue
		}
		for _, ep := range slice.Endpoints {
			c := ep.Conditions
			serving := c.Serving == nil || *c.Serving
			if c.Serving == nil && c.Ready != nil {
				serving = *c.Ready
			}
			if !serving || (c.Terminating != nil && *c.Terminating) {
				continue
			}
			for _, a := range ep.Addresses {
				hp := net.JoinHostPort(a, strconv.Itoa(int(port)))
				if !seen[hp] {
					seen[hp] = true
					out = append(out, hp)
				}
			}
		}
	}
	if len(out) == 0 && !b.opts.AllowEmptyServices {
		return nil, fmt.Errorf("service %s/%s has no ready endpoint on port %s (providers.kubernetesCRD.allowEmptyServices keeps it, answering 503)", svc.Namespace, svc.Name, portString(be.port))
	}
	return out, nil
}

func portString(p corev1.ServicePort) string {
	if p.Name != "" {
		return p.Name
	}
	return strconv.Itoa(int(p.Port))
}

// scheme is the URL scheme of an HTTP backend: the one given (http, https,
// h2c), else https for port 443 or a port name starting with "https".
func scheme(given string, p corev1.ServicePort) (string, error) {
	switch given {
	case "http", "https", "h2c":
		return given, nil
	case "":
		if p.Port == 443 || strings.HasPrefix(p.Name, "https") {
			return "https", nil
		}
		return "http", nil
	}
	return "", fmt.Errorf("scheme %q: want http, https or h2c", given)
}
