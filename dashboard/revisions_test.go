package dashboard

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestRevisionsAreApplications: a version applied again (m1, m2, m1) is a
// new entry with its own seq and what it changed; only the newest is
// current; the current one's counts are the overview's.
func TestRevisionsAreApplications(t *testing.T) {
	f := newFixture(t, nil)
	if err := f.db.SaveApplied(context.Background(), f.m1, t0.Add(time.Minute), Counts(f.tables.active.Load())); err != nil {
		t.Fatal(err)
	}
	f.tables.swap(f.m1)
	h := f.api.Handler()
	var revs []revisionSummary
	if err := json.Unmarshal(do(t, h, "GET", "/api/revisions", nil).Body.Bytes(), &revs); err != nil {
		t.Fatal(err)
	}
	if len(revs) != 3 || revs[0].Version != f.m1.Version || revs[2].Version != f.m1.Version || revs[1].Version != f.m2.Version {
		t.Fatalf("revisions %+v, want m1, m2, m1", revs)
	}
	if !revs[0].Current || revs[1].Current || revs[2].Current {
		t.Errorf("current: %v %v %v, want only the newest", revs[0].Current, revs[1].Current, revs[2].Current)
	}
	if revs[0].Seq <= revs[1].Seq || revs[1].Seq <= revs[2].Seq {
		t.Errorf("seq %d %d %d, want decreasing", revs[0].Seq, revs[1].Seq, revs[2].Seq)
	}
	if c := revs[0].Changes; c == nil || len(c.Routers.Added) != 1 || c.Routers.Added[0] != "old@file" || len(c.Routers.Removed) != 1 || c.Routers.Removed[0] != "gated@file" {
		t.Errorf("newest changes %+v, want old@file back, gated@file gone", c)
	}
	if revs[2].Changes != nil {
		t.Errorf("oldest changes %+v, want none (nothing before it)", revs[2].Changes)
	}
	var ov overview
	if err := json.Unmarshal(do(t, h, "GET", "/api/overview", nil).Body.Bytes(), &ov); err != nil {
		t.Fatal(err)
	}
	r := revs[0]
	if r.Routers != ov.HTTP.Routers.Total || r.Services != ov.HTTP.Services.Total || r.Middlewares != ov.HTTP.Middlewares.Total || r.Problems != ov.Problems {
		t.Errorf("current revision counts %d/%d/%d/%d, overview %d/%d/%d/%d", r.Routers, r.Services, r.Middlewares, r.Problems,
			ov.HTTP.Routers.Total, ov.HTTP.Services.Total, ov.HTTP.Middlewares.Total, ov.Problems)
	}
	if ov.Problems == 0 {
		t.Error("the fixture has problems; the overview counts none")
	}
}
