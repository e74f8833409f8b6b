package dashboard

import (
	"net/http"

	"github.com/gantry-proxy/gantry/providers/kubernetes/ingressnginx"
)

// getMigration serves GET /api/kubernetes/ingress-nginx/migration: the
// ingress-nginx migration report of providers.kubernetesIngressNGINX (per
// Ingress and annotation: exact, approximated or refused, with totals),
// the same report `gantry migrate ingress-nginx` prints. 404 without that
// provider; 503 until it has read the cluster.
func (a *API) getMigration(w http.ResponseWriter, _ *http.Request) {
	if a.opts.Migration == nil {
		writeError(w, http.StatusNotFound, "providers.kubernetesIngressNGINX is not configured")
		return
	}
	rep := a.opts.Migration()
	if rep == nil {
		writeError(w, http.StatusServiceUnavailable, "the ingress-nginx provider has not read the cluster yet")
		return
	}
	writeJSON(w, http.StatusOK, migrationView{Report: rep, Table: ingressnginx.Table()})
}

// migrationView is the report with the classification table it came from.
type migrationView struct {
	*ingressnginx.Report
	Table []ingressnginx.Annotation `json:"table"`
}
