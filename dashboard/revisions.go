package dashboard

import (
	"errors"
	"net/http"
	"time"

	"github.com/gantry-proxy/gantry/store"
)

// Counts are the figures of table t as /api/overview counts them: HTTP
// routers, services and middlewares, the internal ones included (the
// entrypoint redirection, api@internal, noop@internal…), and the problems
// of its configuration as /api/problems lists them (the providers' and
// the compiled table's; not the live ones, failed ACME orders and backends
// down, which belong to no configuration). The applier stores them with
// each revision (store.DB.SaveApplied), so /api/revisions and the overview
// count from one source.
func Counts(t Table) *store.Counts {
	v := &view{tbl: t, merged: t.Merged(), status: t.Report()}
	if v.merged == nil {
		return &store.Counts{}
	}
	return v.counts(len(v.configProblems()))
}

// counts is v's HTTP totals as the overview counts them, with problems.
func (v *view) counts(problems int) *store.Counts {
	if v.status == nil {
		return &store.Counts{Problems: problems}
	}
	h := v.http()
	return &store.Counts{Routers: len(h.Routers), Services: len(v.serviceNames()), Middlewares: len(h.Middlewares), Problems: problems}
}

// revisionSummary is one entry of /api/revisions: one application of a
// configuration (without its body), newest first. Seq identifies the
// application (a version applied again is a new entry); Current marks the
// newest application only, when it is the configuration serving now.
// Changes is what it changed from the application before it (nil for the
// oldest kept). The counts of the current one are the overview's (its
// live problems included); an older one's are those stored when it was
// applied (Counts), or, for revisions stored without them, the objects of
// its configuration and the providers' problems.
type revisionSummary struct {
	Seq         uint64         `json:"seq"`
	Version     string         `json:"version"`
	At          time.Time      `json:"at"`
	Routers     int            `json:"routers"`
	Services    int            `json:"services"`
	Middlewares int            `json:"middlewares"`
	Problems    int            `json:"problems"`
	Current     bool           `json:"current"`
	Changes     *store.Changes `json:"changes,omitempty"`
}

// getRevisions is GET /api/revisions?limit=N (default 50): the last N
// applications, newest first.
func (a *API) getRevisions(w http.ResponseWriter, r *http.Request) {
	if a.opts.History == nil {
		writeError(w, http.StatusServiceUnavailable, "no configuration store")
		return
	}
	limit, err := intParam(r, "limit", 50)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	// One more than asked: the last one's changes are from it.
	revs, err := a.opts.History.History(r.Context(), limit+1)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	v := a.view()
	cur := v.tbl.Version()
	n := min(len(revs), limit)
	out := make([]revisionSummary, 0, n)
	for i, rv := range revs[:n] {
		s := revisionSummary{
			Seq: rv.Seq, Version: rv.Version, At: rv.At, Routers: rv.Routers, Services: rv.Services,
			Middlewares: rv.Middlewares, Problems: len(rv.Problems), Current: i == 0 && rv.Version == cur,
		}
		if c := rv.Counts; c != nil {
			s.Routers, s.Services, s.Middlewares, s.Problems = c.Routers, c.Services, c.Middlewares, c.Problems
		}
		if s.Current {
			c := v.counts(len(a.problems(v)))
			s.Routers, s.Services, s.Middlewares, s.Problems = c.Routers, c.Services, c.Middlewares, c.Problems
		}
		if i+1 < len(revs) {
			ch := store.Diff(revs[i+1].Config, rv.Config)
			s.Changes = &ch
		}
		out = append(out, s)
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *API) revision(w http.ResponseWriter, r *http.Request, version string) (*store.Revision, bool) {
	if a.opts.History == nil {
		writeError(w, http.StatusServiceUnavailable, "no configuration store")
		return nil, false
	}
	rv, err := a.opts.History.Revision(r.Context(), version)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "revision not found: "+version)
		return nil, false
	case err != nil:
		writeError(w, http.StatusInternalServerError, err.Error())
		return nil, false
	}
	return rv, true
}

func (a *API) getRevision(w http.ResponseWriter, r *http.Request) {
	if rv, ok := a.revision(w, r, r.PathValue("version")); ok {
		writeJSON(w, http.StatusOK, rv)
	}
}

// diffResponse is /api/revisions/{a}/diff/{b}: what changed from a to b.
type diffResponse struct {
	From    string        `json:"from"`
	To      string        `json:"to"`
	Changes store.Changes `json:"changes"`
}

func (a *API) getDiff(w http.ResponseWriter, r *http.Request) {
	from, ok := a.revision(w, r, r.PathValue("a"))
	if !ok {
		return
	}
	to, ok := a.revision(w, r, r.PathValue("b"))
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, diffResponse{From: from.Version, To: to.Version, Changes: store.Diff(from.Config, to.Config)})
}
