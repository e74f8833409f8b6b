package crd

import (
	"fmt"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// defaultName is the name of the TLS options and store every router uses
// unless it names others.
const defaultName = "default"

// tlsOptions publishes each TLSOption as "<ns>-<name>", or as "default"
// for one named default (in one namespace only: defaults in several
// namespaces are all left out, as in Traefik). A TLSOption whose client CA
// Secret cannot be read is left out, so that routers naming it are
// disabled rather than served with weaker options.
func (b *builder) tlsOptions(objs []*TLSOption) {
	var defaults []string
	for _, o := range objs {
		src := source("TLSOption", o.Namespace, o.Name)
		id := tlsID(o.Namespace, o.Name, &defaults)
		sp := o.Spec
		opt := new(sp.TLSOptions)
		opt.ClientAuth = config.ClientAuth{ClientAuthType: sp.ClientAuth.ClientAuthType}
		ok := true
		for i, s := range sp.ClientAuth.SecretNames {
			ca, err := b.caFromSecret(o.Namespace, s)
			if err != nil {
				b.errorf(src, []string{"tlsOptions " + id}, fmt.Sprintf("spec.clientAuth.secretNames[%d]", i), "%v: TLS option left out (routers using it are disabled)", err)
				ok = false
				break
			}
			opt.ClientAuth.CAFiles = append(opt.ClientAuth.CAFiles, ca)
		}
		if ok {
			b.conf.TLS.Options[id] = opt
			b.origins["tlsOptions "+id] = src
		}
	}
	dropDefault(b, "TLSOption", "tlsOptions", defaults, b.conf.TLS.Options)
}

// tlsStores publishes each TLSStore ("default", or "<ns>-<name>") and the
// certificates it lists, in that store.
func (b *builder) tlsStores(objs []*TLSStore) {
	var defaults []string
	for _, o := range objs {
		src := source("TLSStore", o.Namespace, o.Name)
		id := tlsID(o.Namespace, o.Name, &defaults)
		obj := []string{"tlsStore " + id}
		store := &config.TLSStore{DefaultGeneratedCert: o.Spec.DefaultGeneratedCert}
		if d := o.Spec.DefaultCertificate; d != nil {
			c, err := b.certificate(o.Namespace, d.SecretName)
			if err != nil {
				b.errorf(src, obj, "spec.defaultCertificate.secretName", "%v: store left out", err)
				continue
			}
			store.DefaultCertificate = &c
		}
		for i, c := range o.Spec.Certificates {
			if err := b.addCertificate(o.Namespace, c.SecretName, []string{id}); err != nil {
				b.errorf(src, nil, fmt.Sprintf("spec.certificates[%d].secretName", i), "%v: this certificate is left out", err)
			}
		}
		b.conf.TLS.Stores[id] = store
		b.origins["tlsStore "+id] = src
	}
	dropDefault(b, "TLSStore", "tlsStore", defaults, b.conf.TLS.Stores)
}

// tlsID is the name the TLSOption or TLSStore ns/name is published
// under: "default" for one named default (ns is then added to defaults),
// else "<ns>-<name>".
func tlsID(ns, name string, defaults *[]string) string {
	if name == defaultName {
		*defaults = append(*defaults, ns)
		return defaultName
	}
	return providers.Normalize(makeID(ns, name))
}

// dropDefault leaves out the published default of kind (TLSOption or
// TLSStore, named objKey+" default" in the configuration) when objects
// named default exist in several namespaces (defaults), as Traefik does,
// with an error naming those namespaces.
func dropDefault[V any](b *builder, kind, objKey string, defaults []string, published map[string]V) {
	if len(defaults) < 2 {
		return
	}
	delete(published, defaultName)
	b.errorf(kind+" */default", []string{objKey + " default"}, "metadata.name",
		"a %s named default exists in several namespaces (%s): none of them is used", kind, strings.Join(defaults, ", "))
}
