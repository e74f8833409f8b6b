package dashboard

import (
	"context"
	"net/http"
	"time"

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
