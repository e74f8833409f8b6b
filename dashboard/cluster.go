package dashboard

import (
	"context"
	"net/http"
	"time"

	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/consul"
)

// Cluster is the Consul registration of the instance (static
// cluster.consul): Status lists every instance, its configuration version
// and whether the passing ones agree.
type Cluster interface {
	Status(ctx context.Context) (*consul.ClusterStatus, error)
}

// getCluster is GET /api/cluster: {service, instances: [{id, address,
// port, configVersion, status, self}], agree}; 404 without cluster.consul,
// 502 when the Consul agent does not answer (within 5s).
func (a *API) getCluster(w http.ResponseWriter, r *http.Request) {
	if a.opts.Cluster == nil {
		writeError(w, http.StatusNotFound, "no cluster section in the static configuration")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	cs, err := a.opts.Cluster.Status(ctx)
	if err != nil {
		writeError(w, http.StatusBadGateway, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, cs)
}

// contentVersion is the hash of v's configuration alone (providers.Hash),
// the version the cluster registration publishes for the same table, so
// the header and the Cluster tab show one version; computed once per
// table. "" when it does not encode.
func (a *API) contentVersion(v *view) string {
	a.cvMu.Lock()
	defer a.cvMu.Unlock()
	if a.cvTable == v.tbl {
		return a.cv
	}
	h, err := providers.Hash(v.merged.Config)
	if err != nil {
		h = ""
	}
	a.cvTable, a.cv = v.tbl, h
	return h
}
