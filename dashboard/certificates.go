package dashboard

import (
	"net/http"

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
// notAfter, renewAt, state, last error), sorted by resolver and domain; an
// empty list without resolvers.
func (a *API) getCertificates(w http.ResponseWriter, _ *http.Request) {
	out := []acme.CertificateStatus{}
	if a.opts.Certificates != nil {
		out = append(out, a.opts.Certificates.Certificates()...)
	}
	writeJSON(w, http.StatusOK, out)
}
