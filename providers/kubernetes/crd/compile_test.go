package crd

import (
	"context"
	"crypto/tls"
	"net/http"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/router/routertest"
)

type nameHandlers struct{ routertest.Base }

func (nameHandlers) Build(_ context.Context, name string, _ *config.Router) (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(name)) }), nil
}

// The translated HTTP snapshot merges and compiles with every router,
// service and middleware enabled (TCP and UDP need the data plane's
// builders):
// each name a router, weighted service, mirror, failover, chain, errors
// page or TLS option refers to is one the translation published.
func TestSnapshotCompiles(t *testing.T) {
	snap := translate(t, Options{}, "testdata/core.yaml", "testdata/http.yaml")
	for _, p := range snap.Problems {
		t.Errorf("problem: %v", p)
	}
	m, err := providers.Merge(map[string]providers.Snapshot{ProviderName: snap})
	if err != nil {
		t.Fatal(err)
	}
	tab := router.Compile(context.Background(), m, nameHandlers{}, router.Options{EntryPoints: []router.EntryPoint{
		{Name: "web"}, {Name: "websecure"}, {Name: "tcp"}, {Name: "dns", UDP: true},
	}})
	rep := tab.Report()
	for n, st := range rep.Routers {
		if st.Status == router.StatusDisabled {
			t.Errorf("router %s disabled: %v", n, st.Errors)
		}
	}
	for _, set := range []map[string]*router.ObjectStatus{rep.Services, rep.Middlewares} {
		for n, st := range set {
			if st.Status == router.StatusDisabled {
				t.Errorf("%s disabled: %v", n, st.Errors)
			}
		}
	}
	if len(rep.Routers) != 2 || len(rep.Services) < 8 || len(rep.Middlewares) != 11 {
		t.Errorf("compiled %d routers, %d services, %d middlewares", len(rep.Routers), len(rep.Services), len(rep.Middlewares))
	}
	r := httpReq("whoami.example.com", "/split/x")
	if name, _ := tab.Lookup("websecure", r); name != routerName("apps", "whoami", "Host(`whoami.example.com`) && PathPrefix(`/split`)")+"@"+ProviderName {
		t.Errorf("lookup = %q", name)
	}
}

func httpReq(host, path string) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, "https://"+host+path, nil)
	r.Host = host
	r.TLS = &tls.ConnectionState{ServerName: host}
	return r
}
