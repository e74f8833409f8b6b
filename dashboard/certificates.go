package dashboard

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/acme"
)

// Certificates gives the certificates of the ACME resolvers and their live
// problems (failed orders); *acme.Manager satisfies it.
type Certificates interface {
	Certificates() []acme.CertificateStatus
	Problems() []providers.Problem
}

// getCertificates serves /api/tls/certificates: one object per certificate
// a resolver holds or is ordering (subject, SANs, issuer, resolver,
// notAfter, renewAt, state, last error), sorted by resolver and domain,
// then the certificates of the configuration's tls.certificates and
// default certificates (resolver "", state "valid" or "expired", usedBy
// their stores, "store default"), sorted by name; an empty list without
// any.
func (a *API) getCertificates(w http.ResponseWriter, _ *http.Request) {
	out := []acme.CertificateStatus{}
	if a.opts.Certificates != nil {
		out = append(out, a.opts.Certificates.Certificates()...)
	}
	out = append(out, fileCertificates(a.tables.Current().Merged().Config, out, time.Now())...)
	writeJSON(w, http.StatusOK, out)
}

// fileCertificates describes the certificates of c's tls section that no
// ACME resolver issued (those are listed by the resolver).
func fileCertificates(c *config.Configuration, fromACME []acme.CertificateStatus, now time.Time) []acme.CertificateStatus {
	if c == nil || c.TLS == nil {
		return nil
	}
	acmeSerials := map[string]bool{}
	for _, s := range fromACME {
		if s.Serial != "" {
			acmeSerials[s.Serial] = true
		}
	}
	stores := map[string][]string{} // serial -> stores
	for _, cs := range c.TLS.Certificates {
		if cs == nil {
			continue
		}
		for _, leaf := range observe.TLSCertificates(&config.TLSConfiguration{Certificates: []*config.CertAndStores{cs}}) {
			names := cs.Stores
			if len(names) == 0 {
				names = []string{"default"}
			}
			stores[leaf.SerialNumber.Text(16)] = names
		}
	}
	var out []acme.CertificateStatus
	seen := map[string]bool{}
	for _, leaf := range observe.TLSCertificates(c.TLS) {
		serial := leaf.SerialNumber.Text(16)
		if acmeSerials[serial] || seen[serial] {
			continue
		}
		seen[serial] = true
		st := acme.CertificateStatus{
			Main: leaf.Subject.CommonName, Subject: leaf.Subject.String(), DNSNames: leaf.DNSNames,
			Issuer: leaf.Issuer.String(), Serial: serial, NotBefore: leaf.NotBefore, NotAfter: leaf.NotAfter, State: "valid",
		}
		for _, n := range leaf.DNSNames {
			if st.Main == "" {
				st.Main = n
			} else if n != st.Main {
				st.SANs = append(st.SANs, n)
			}
		}
		for _, s := range stores[serial] {
			st.Users = append(st.Users, "store "+s)
		}
		if len(st.Users) == 0 {
			st.Users = []string{"default certificate"} // a store's defaultCertificate
		}
		if !now.Before(leaf.NotAfter) {
			st.State = "expired"
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(x, y acme.CertificateStatus) int {
		return cmp.Or(strings.Compare(x.Main, y.Main), strings.Compare(x.Serial, y.Serial))
	})
	return out
}
