package dashboard

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/gantry-proxy/gantry/providers/kubernetes/ingressnginx"
)

func TestMigrationEndpoint(t *testing.T) {
	path := "/api/kubernetes/ingress-nginx/migration"
	if rec := do(t, newFixture(t, nil).api.Handler(), "GET", path, nil); rec.Code != http.StatusNotFound {
		t.Fatalf("without the provider: %d %s", rec.Code, rec.Body)
	}
	var rep *ingressnginx.Report
	f := newFixture(t, func(o *Options) { o.Migration = func() *ingressnginx.Report { return rep } })
	if rec := do(t, f.api.Handler(), "GET", path, nil); rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("before the first read: %d %s", rec.Code, rec.Body)
	}
	rep = &ingressnginx.Report{
		Ingresses: []ingressnginx.IngressReport{{Namespace: "shop", Name: "web", Status: "served", Annotations: []ingressnginx.Verdict{
			{Annotation: "limit-rps", Value: "5", Support: ingressnginx.Approximated, Detail: "429"},
		}}},
		Totals: ingressnginx.Totals{Ingresses: 1, Annotations: 1, Approximated: 1},
	}
	rec := do(t, f.api.Handler(), "GET", path, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	var got struct {
		Ingresses []ingressnginx.IngressReport
		Totals    ingressnginx.Totals
		Table     []ingressnginx.Annotation
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Totals != rep.Totals || len(got.Ingresses) != 1 || got.Ingresses[0].Annotations[0].Support != ingressnginx.Approximated {
		t.Errorf("report %+v", got)
	}
	if len(got.Table) != len(ingressnginx.Table()) {
		t.Errorf("table has %d rows", len(got.Table))
	}
}
