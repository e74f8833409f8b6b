package crd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gantry-proxy/gantry/providers/kubernetes/k8s"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// target resolves a reference to port of Kubernetes Service ns/name
// (k8s.Backends.Resolve: serving, non-terminating endpoints, the ClusterIP
// with nativeLB, an ExternalName when allowed). A Service without any such
// address is an error unless allowEmptyServices.
func (b *builder) target(ns, name string, port intstr.IntOrString, nativeLB *bool) (k8s.Target, error) {
	if strings.Contains(name, "@") {
		return k8s.Target{}, fmt.Errorf("service %q: a Kubernetes Service name cannot hold '@' (for another provider's service use kind TraefikService)", name)
	}
	var ref k8s.PortRef
	switch {
	case port.Type == intstr.Int && port.IntVal != 0:
		ref.Number = port.IntVal
	case port.Type == intstr.String && port.StrVal != "":
		ref.Name = port.StrVal
	default:
		return k8s.Target{}, errors.New("port is required for a Kubernetes Service")
	}
	t, err := b.cl.Resolve(ns, name, ref, b.nativeLB(nativeLB))
	if err != nil {
		return t, err
	}
	if t.Empty() && !b.opts.AllowEmptyServices {
		return t, fmt.Errorf("service %s/%s has no ready endpoint on port %s (providers.kubernetesCRD.allowEmptyServices keeps it, answering 503)", ns, name, ref)
	}
	return t, nil
}

// nativeLB is a reference's nativeLB, defaulting to nativeLBByDefault.
func (b *builder) nativeLB(ref *bool) bool {
	if ref != nil {
		return *ref
	}
	return b.opts.NativeLBByDefault
}

// scheme checks a Service reference's scheme: http, https, h2c, or empty
// (Traefik's default for the port: k8s.Scheme).
func scheme(given string) error {
	switch given {
	case "", "http", "https", "h2c":
		return nil
	}
	return fmt.Errorf("scheme %q: want http, https or h2c", given)
}
