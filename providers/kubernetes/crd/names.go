package crd

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/providers"
)

// ProviderName is the provider's name: its objects are "x@kubernetescrd",
// as Traefik names them.
const ProviderName = "kubernetescrd"

// makeID is "<namespace>-<name>" (just name without a namespace).
func makeID(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "-" + name
}

// routerName is the name of the router made from one route: the object's
// namespace and name and the first 10 bytes (20 hex digits) of the SHA-256
// of its match, normalized, as Traefik names it.
func routerName(namespace, name, match string) string {
	sum := sha256.Sum256([]byte(match))
	return providers.Normalize(makeID(namespace, name+"-"+hex.EncodeToString(sum[:10])))
}

// tcpRouterName is routerName without normalizing, as Traefik names TCP
// routers ("default-my.app-<hex>").
func tcpRouterName(namespace, name, match string) string {
	sum := sha256.Sum256([]byte(match))
	return makeID(namespace, name+"-"+hex.EncodeToString(sum[:10]))
}

// objectName is the name the object is published under: the metadata name,
// or generateName for an object created without one.
func objectName(name, generateName string) string {
	if name == "" {
		return generateName
	}
	return name
}

// crossNamespaceError is a reference to another namespace while
// allowCrossNamespace is false.
func crossNamespaceError(what, ns, name, from string) error {
	return fmt.Errorf("%s %s/%s is in another namespace than %s: refused (providers.kubernetesCRD.allowCrossNamespace is false)", what, ns, name, from)
}

// resolveRef returns the name a reference to a Middleware, MiddlewareTCP,
// TLSOption or ServersTransport(TCP) is published under. A name holding
// "@" is another provider's object and is kept as written (namespace
// ignored); "<ns>-<name>@kubernetescrd" is refused without
// allowCrossNamespace, since it can point into any namespace. Otherwise
// the namespace defaults to from, and another namespace needs
// allowCrossNamespace.
func (b *builder) resolveRef(what, from string, ref ObjectRef) (string, error) {
	if strings.Contains(ref.Name, "@") {
		if err := b.crossProvider(what, from, ref.Name); err != nil {
			return "", err
		}
		return ref.Name, nil
	}
	ns := ref.Namespace
	if ns == "" {
		ns = from
	}
	if ns != from && !b.opts.AllowCrossNamespace {
		return "", crossNamespaceError(what, ns, ref.Name, from)
	}
	return providers.Normalize(makeID(ns, ref.Name)), nil
}

// crossProvider checks a reference "x@provider" made from namespace from.
func (b *builder) crossProvider(what, from, name string) error {
	if !b.opts.AllowCrossNamespace && strings.HasSuffix(name, "@"+ProviderName) {
		return fmt.Errorf("%s %q: a reference to @%s by full name is refused while allowCrossNamespace is false (it can name any namespace); give the name and namespace instead", what, name, ProviderName)
	}
	if b.opts.CrossProviderNamespaces != nil && !slices.Contains(b.opts.CrossProviderNamespaces, from) {
		return fmt.Errorf("%s %q: namespace %s is not in providers.kubernetesCRD.crossProviderNamespaces", what, name, from)
	}
	return nil
}
