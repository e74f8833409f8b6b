package crd

import (
	"errors"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// serversTransports publishes each ServersTransport as "<ns>-<name>", its
// CAs and client certificates read from Secrets and ConfigMaps.
func (b *builder) serversTransports(objs []*ServersTransport) {
	publishEach(b, "ServersTransport", "serversTransport", objs, b.conf.HTTP.ServersTransports, func(o *ServersTransport, _ string) (*config.ServersTransport, string, error) {
		sp := o.Spec
		tc, field, err := b.serversTLS(o.Namespace, sp.TLSClientConfig, sp.CipherSuites, sp.MinVersion, sp.MaxVersion)
		if err != nil {
			return nil, fieldPath("spec", field), err
		}
		return &config.ServersTransport{
			TLSClientCommon:     tc.TLSClientCommon,
			MaxIdleConnsPerHost: sp.MaxIdleConnsPerHost,
			ForwardingTimeouts:  sp.ForwardingTimeouts,
			DisableHTTP2:        sp.DisableHTTP2,
			PeerCertURI:         tc.PeerCertURI,
		}, "", nil
	})
}

// errUnsupported is the error of a transport field Gantry lacks.
var errUnsupported = errors.New("not supported by Gantry: transport left out")

// serversTLS converts t, the TLS towards the servers of a ServersTransport
// or ServersTransportTCP in namespace ns, into the dynamic configuration's
// form: its CAs and client certificates read from Secrets and ConfigMaps.
// ciphers, minV and maxV are a ServersTransport's own TLS fields. The
// first field set that Gantry's transports lack is errUnsupported, named
// by field (relative to t); a CA or certificate that cannot be read is an
// error naming itself, with field "".
func (b *builder) serversTLS(ns string, t TLSClientConfig, ciphers []string, minV, maxV string) (c config.TLSClientConfig, field string, err error) {
	switch {
	case len(ciphers) > 0:
		return c, "cipherSuites", errUnsupported
	case minV != "":
		return c, "minVersion", errUnsupported
	case maxV != "":
		return c, "maxVersion", errUnsupported
	case len(t.PeerCertSANs) > 0:
		return c, "peerCertSANs", errUnsupported
	case t.Spiffe != nil:
		return c, "spiffe", errUnsupported
	}
	cas, err := b.rootCAs(ns, t.RootCAs, t.RootCAsSecrets)
	if err != nil {
		return c, "", err
	}
	certs, err := b.clientCertificates(ns, t.CertificatesSecrets)
	if err != nil {
		return c, "", err
	}
	return config.TLSClientConfig{TLSClientCommon: config.TLSClientCommon{ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify, RootCAs: cas, Certificates: certs}, PeerCertURI: t.PeerCertURI}, "", nil
}

// fieldPath is base, or base.field when field is not "".
func fieldPath(base, field string) string {
	if field == "" {
		return base
	}
	return base + "." + field
}

// serversTransportTCPs publishes each ServersTransportTCP as "<ns>-<name>".
func (b *builder) serversTransportTCPs(objs []*ServersTransportTCP) {
	for _, o := range objs {
		src := source("ServersTransportTCP", o.Namespace, o.Name)
		id := providers.Normalize(makeID(o.Namespace, o.Name))
		obj := []string{config.KindTCPServersTransport + " " + id}
		sp := o.Spec
		st := &config.TCPServersTransport{ProxyProtocol: sp.ProxyProtocol}
		for _, d := range []struct {
			dst *config.Duration
			src *config.Duration
		}{{&st.DialTimeout, sp.DialTimeout}, {&st.DialKeepAlive, sp.DialKeepAlive}, {&st.TerminationDelay, sp.TerminationDelay}} {
			if d.src != nil {
				*d.dst = *d.src
			}
		}
		if t := sp.TLS; t != nil {
			tc, field, err := b.serversTLS(o.Namespace, *t, nil, "", "")
			if err != nil {
				b.problem(providers.SeverityError, src, obj, fieldPath("spec.tls", field), err)
				continue
			}
			st.TLS = &tc
		}
		b.conf.EnsureTCP().ServersTransports[id] = st
		b.origins[config.KindTCPServersTransport+" "+id] = src
	}
}
