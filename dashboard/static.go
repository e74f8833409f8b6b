package dashboard

import "net/http"

// getStatic serves /api/static: the static configuration's revision, its
// file and its latest live reloads (static.ReloadStatus), 404 when the
// process does not report them.
func (a *API) getStatic(w http.ResponseWriter, r *http.Request) {
	if a.opts.StaticReloads == nil {
		writeError(w, http.StatusNotFound, "no static configuration reloads reported")
		return
	}
	writeJSON(w, http.StatusOK, a.opts.StaticReloads())
}
