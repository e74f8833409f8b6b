package dashboard

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/router"
)

// /api/static serves what Options.StaticReloads reports, and 404 without it.
func TestStaticReloads(t *testing.T) {
	a, err := New(Options{Tables: RouterTables(router.NewActive())})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if rec := do(t, a.Handler(), "GET", "/api/static", nil); rec.Code != http.StatusNotFound {
		t.Errorf("without a source: %d, want 404", rec.Code)
	}
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	want := static.ReloadStatus{Revision: 2, File: "/etc/gantry/gantry.yml", Since: at, Reloads: []static.Reload{{
		Revision: 2, At: at, Trigger: "SIGHUP", Outcome: static.ReloadPartial,
		Applied: []static.Change{{Path: "entryPoints.web", Kind: static.Changed}},
		Refused: []static.Refusal{{Change: static.Change{Path: "store", Kind: static.Changed}, Reason: "restart"}},
	}}}
	b, err := New(Options{Tables: RouterTables(router.NewActive()), StaticReloads: func() static.ReloadStatus { return want }})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rec := do(t, b.Handler(), "GET", "/api/static", nil)
	var got static.ReloadStatus
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
	}
	if got.Revision != 2 || len(got.Reloads) != 1 || got.Reloads[0].Refused[0].Path != "store" || got.Reloads[0].Applied[0].Path != "entryPoints.web" {
		t.Errorf("/api/static: %s", rec.Body)
	}
}
