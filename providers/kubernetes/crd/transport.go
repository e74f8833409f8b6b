package crd

import (
	"errors"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// serversTransports publishes each ServersTransport as "<ns>-<name>", its
// CAs and client certificates read from Secrets and ConfigMaps.
func (b *builder) serversTransports(objs []*ServersTransport) {
	for _, o := range objs {
		src := source("ServersTransport", o.Namespace, o.Name)
		id := normalize(makeID(o.Namespace, o.Name))
		obj := []string{"serversTransport " + id}
		sp := o.Spec
		if field := unsupportedTLS(sp.CipherSuites, sp.MinVersion, sp.MaxVersion, sp.PeerCertSANs, sp.Spiffe); field != "" {
			b.problem(providers.SeverityError, src, obj, "spec."+field, errors.New("not supported by Gantry: transport left out"))
			continue
		}
		cas, err := b.rootCAs(o.Namespace, sp.RootCAs, sp.RootCAsSecrets)
		if err != nil {
			b.problem(providers.SeverityError, src, obj, "spec", err)
			continue
		}
		certs, err := b.clientCertificates(o.Namespace, sp.CertificatesSecrets)
		if err != nil {
			b.problem(providers.SeverityError, src, obj, "spec", err)
			continue
		}
		b.conf.HTTP.ServersTransports[id] = &config.ServersTransport{
			ServerName:          sp.ServerName,
			InsecureSkipVerify:  sp.InsecureSkipVerify,
			RootCAs:             cas,
			Certificates:        certs,
			MaxIdleConnsPerHost: sp.MaxIdleConnsPerHost,
			ForwardingTimeouts:  sp.ForwardingTimeouts,
			DisableHTTP2:        sp.DisableHTTP2,
			PeerCertURI:         sp.PeerCertURI,
		}
		b.origins["serversTransport "+id] = src
	}
}

// unsupportedTLS names the first set field Gantry's transports lack.
func unsupportedTLS(ciphers []string, minV, maxV string, sans []SAN, spiffe *Spiffe) string {
	switch {
	case len(ciphers) > 0:
		return "cipherSuites"
	case minV != "":
		return "minVersion"
	case maxV != "":
		return "maxVersion"
	case len(sans) > 0:
		return "peerCertSANs"
	case spiffe != nil:
		return "spiffe"
	}
	return ""
}

// serversTransportTCPs publishes each ServersTransportTCP as "<ns>-<name>".
func (b *builder) serversTransportTCPs(objs []*ServersTransportTCP) {
	for _, o := range objs {
		src := source("ServersTransportTCP", o.Namespace, o.Name)
		id := normalize(makeID(o.Namespace, o.Name))
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
			if field := unsupportedTLS(nil, "", "", t.PeerCertSANs, t.Spiffe); field != "" {
				b.problem(providers.SeverityError, src, obj, "spec.tls."+field, errors.New("not supported by Gantry: transport left out"))
				continue
			}
			cas, err := b.rootCAs(o.Namespace, t.RootCAs, t.RootCAsSecrets)
			if err != nil {
				b.problem(providers.SeverityError, src, obj, "spec.tls", err)
				continue
			}
			certs, err := b.clientCertificates(o.Namespace, t.CertificatesSecrets)
			if err != nil {
				b.problem(providers.SeverityError, src, obj, "spec.tls", err)
				continue
			}
			st.TLS = &config.TLSClientConfig{ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify, RootCAs: cas, Certificates: certs, PeerCertURI: t.PeerCertURI}
		}
		b.conf.EnsureTCP().ServersTransports[id] = st
		b.origins[config.KindTCPServersTransport+" "+id] = src
	}
}
