package dashboard

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gantry-proxy/gantry/providers"
)

// nextPageHeader carries the next page number (1 on the last page), as in
// Traefik's API.
const nextPageHeader = "X-Next-Page"

const defaultPerPage = 100

// criterion holds the list filters Traefik's API accepts (search, status,
// serviceName, middlewareName) plus Gantry's provider filter.
type criterion struct {
	search, status, provider, service, middleware string
}

func newCriterion(r *http.Request) criterion {
	q := r.URL.Query()
	return criterion{
		search:     strings.ToLower(q.Get("search")),
		status:     q.Get("status"),
		provider:   q.Get("provider"),
		service:    q.Get("serviceName"),
		middleware: q.Get("middlewareName"),
	}
}

func (c criterion) keep(name, status string, searchIn ...string) bool {
	if c.status != "" && !strings.EqualFold(c.status, status) {
		return false
	}
	if c.provider != "" && !strings.EqualFold(c.provider, providers.ProviderOf(name)) {
		return false
	}
	if c.search == "" {
		return true
	}
	return slices.ContainsFunc(append(searchIn, name), func(s string) bool {
		return strings.Contains(strings.ToLower(s), c.search)
	})
}

func (c criterion) keepRouter(it routerItem) bool {
	if !c.keep(it.Name, it.Status, it.Conf.Rule) {
		return false
	}
	if c.service != "" {
		if strings.Contains(c.service, "@") {
			if c.service != it.Conf.Service {
				return false
			}
		} else if before, _, _ := strings.Cut(it.Conf.Service, "@"); before != c.service {
			return false
		}
	}
	return c.middleware == "" || slices.Contains(it.Conf.Middlewares, c.middleware)
}

// paginate returns items[start:end] for the page and per_page query
// parameters (defaults 1 and 100) and sets X-Next-Page. A bad value, or a
// page past the end, is an error (answered 400, as Traefik does). Any
// positive page and per_page are accepted: the page is checked against the
// item count before (page-1)*per_page is computed, so a client's huge
// values never overflow it.
func paginate[T any](w http.ResponseWriter, r *http.Request, items []T) ([]T, error) {
	perPage, err := intParam(r, "per_page", defaultPerPage)
	if err != nil {
		return nil, err
	}
	page, err := intParam(r, "page", 1)
	if err != nil {
		return nil, err
	}
	// The last page that has items is (len-1)/perPage + 1 (page 1 always
	// answers, empty or not).
	if page > 1 && page-1 > (len(items)-1)/perPage {
		return nil, fmt.Errorf("invalid request: page: %d, per_page: %d", page, perPage)
	}
	start := (page - 1) * perPage // <= len(items)-1 when page > 1
	end := start + min(perPage, len(items)-start)
	next := 1
	if end < len(items) {
		next = page + 1
	}
	w.Header().Set(nextPageHeader, strconv.Itoa(next))
	return items[start:end], nil
}

func intParam(r *http.Request, key string, def int) (int, error) {
	raw := r.URL.Query().Get(key)
	if raw == "" {
		return def, nil
	}
	v, err := strconv.Atoi(raw)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("invalid request: %s: %q is not a positive integer", key, raw)
	}
	return v, nil
}
