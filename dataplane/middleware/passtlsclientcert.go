package middleware

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// Headers set by passTLSClientCert (Traefik names).
const (
	headerClientCert     = "X-Forwarded-Tls-Client-Cert"
	headerClientCertInfo = "X-Forwarded-Tls-Client-Cert-Info"
)

// oidDomainComponent is the RFC 2247 domainComponent attribute.
var oidDomainComponent = []int{0, 9, 2342, 19200300, 100, 1, 25}

// newPassTLSClientCert passes the client's TLS certificates (leaf first)
// to the backend. With pem, X-Forwarded-Tls-Client-Cert holds each
// certificate's base64 DER (PEM without armour or line breaks), separated
// by ",". With info, X-Forwarded-Tls-Client-Cert-Info holds, URL-escaped,
// per certificate (separated by ","), the selected fields separated by
// ";": Subject="DC=…,C=…,ST=…,L=…,O=…,OU=…,SerialNumber=…,CN=…",
// Issuer="…", SerialNumber="…", NotBefore="<unix s>", NotAfter="<unix s>",
// SANs="dns,email,ip,uri". Both headers are always removed from the
// incoming request first, so a client cannot forge them.
// Source: https://doc.traefik.io/traefik/middlewares/http/passtlsclientcert/
func newPassTLSClientCert(c *config.PassTLSClientCert) (Middleware, error) {
	pem, info := c.PEM, c.Info
	return handle(func(next http.Handler, w http.ResponseWriter, r *http.Request) {
		r.Header.Del(headerClientCert)
		r.Header.Del(headerClientCertInfo)
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			certs := r.TLS.PeerCertificates
			if pem {
				parts := make([]string, len(certs))
				for i, ct := range certs {
					parts[i] = base64.StdEncoding.EncodeToString(ct.Raw)
				}
				r.Header.Set(headerClientCert, strings.Join(parts, ","))
			}
			if info != nil {
				parts := make([]string, 0, len(certs))
				for _, ct := range certs {
					if s := certInfo(ct, info); s != "" {
						parts = append(parts, s)
					}
				}
				if len(parts) > 0 {
					r.Header.Set(headerClientCertInfo, url.QueryEscape(strings.Join(parts, ",")))
				}
			}
		}
		next.ServeHTTP(w, r)
	}), nil
}

func certInfo(ct *x509.Certificate, o *config.TLSClientCertificateInfo) string {
	var f []string
	if s := o.Subject; s != nil {
		f = append(f, `Subject="`+dnInfo(&ct.Subject, dnOpts{s.DomainComponent, s.Country, s.Province, s.Locality, s.Organization, s.OrganizationalUnit, s.SerialNumber, s.CommonName})+`"`)
	}
	if s := o.Issuer; s != nil {
		f = append(f, `Issuer="`+dnInfo(&ct.Issuer, dnOpts{s.DomainComponent, s.Country, s.Province, s.Locality, s.Organization, false, s.SerialNumber, s.CommonName})+`"`)
	}
	if o.SerialNumber && ct.SerialNumber != nil {
		f = append(f, `SerialNumber="`+ct.SerialNumber.String()+`"`)
	}
	if o.NotBefore {
		f = append(f, `NotBefore="`+strconv.FormatInt(ct.NotBefore.Unix(), 10)+`"`)
	}
	if o.NotAfter {
		f = append(f, `NotAfter="`+strconv.FormatInt(ct.NotAfter.Unix(), 10)+`"`)
	}
	if o.Sans {
		var sans []string
		sans = append(sans, ct.DNSNames...)
		sans = append(sans, ct.EmailAddresses...)
		for _, ip := range ct.IPAddresses {
			sans = append(sans, ip.String())
		}
		for _, u := range ct.URIs {
			sans = append(sans, u.String())
		}
		f = append(f, `SANs="`+strings.Join(sans, ",")+`"`)
	}
	return strings.Join(f, ";")
}

type dnOpts struct{ dc, c, st, l, o, ou, serial, cn bool }

func dnInfo(n *pkix.Name, o dnOpts) string {
	var p []string
	add := func(key string, vals ...string) {
		for _, v := range vals {
			if v != "" {
				p = append(p, key+"="+v)
			}
		}
	}
	if o.dc {
		for _, a := range n.Names {
			if a.Type.Equal(oidDomainComponent) {
				if s, ok := a.Value.(string); ok {
					add("DC", s)
				}
			}
		}
	}
	if o.c {
		add("C", n.Country...)
	}
	if o.st {
		add("ST", n.Province...)
	}
	if o.l {
		add("L", n.Locality...)
	}
	if o.o {
		add("O", n.Organization...)
	}
	if o.ou {
		add("OU", n.OrganizationalUnit...)
	}
	if o.serial {
		add("SerialNumber", n.SerialNumber)
	}
	if o.cn {
		add("CN", n.CommonName)
	}
	return strings.Join(p, ",")
}
