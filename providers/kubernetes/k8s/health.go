package k8s

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/gantry-proxy/gantry/providers"
)

// ProbeInterval is how often Health.Probe asks the API server for
// /version; ProbeTimeout bounds one probe.
const (
	ProbeInterval = 5 * time.Second
	ProbeTimeout  = 5 * time.Second
)

// maxDenied bounds how many distinct refused requests Health remembers.
const maxDenied = 64

// Health is what the client's requests say about the API server: whether
// it answers at all, and which requests it refuses (401/403). It is safe
// for concurrent use; Changed is signalled (without blocking) whenever
// the Problems would change.
type Health struct {
	host    string
	changed chan struct{}

	mu          sync.Mutex
	down        error     // last connection error or 5xx; nil when reachable
	downSince   time.Time // start of the outage
	denied      map[string]string
	deniedOrder []string
}

func newHealth(host string) *Health {
	return &Health{host: host, changed: make(chan struct{}, 1), denied: map[string]string{}}
}

// Changed receives a value after the health changed.
func (h *Health) Changed() <-chan struct{} { return h.changed }

func (h *Health) notify() {
	select {
	case h.changed <- struct{}{}:
	default:
	}
}

// Problems returns the current health problems of provider name: the
// outage, then each refused request, in a stable order.
func (h *Health) Problems(name string) []providers.Problem {
	h.mu.Lock()
	defer h.mu.Unlock()
	var ps []providers.Problem
	if h.down != nil {
		ps = append(ps, providers.Problem{Provider: name, Source: "kubernetes API server " + h.host, Severity: providers.SeverityError,
			Message: fmt.Sprintf("unreachable since %s: %v; the configuration last read keeps serving", h.downSince.UTC().Format(time.RFC3339), h.down)})
	}
	keys := append([]string(nil), h.deniedOrder...)
	sort.Strings(keys)
	for _, k := range keys {
		ps = append(ps, providers.Problem{Provider: name, Source: "kubernetes API server " + h.host + " " + k, Severity: providers.SeverityError,
			Message: h.denied[k] + "; objects of this kind are not read (check the RBAC rules of the provider's service account)"})
	}
	return ps
}

// Down reports whether the API server is unreachable now.
func (h *Health) Down() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.down != nil
}

// observe records the outcome of one request.
func (h *Health) observe(req *http.Request, resp *http.Response, err error) {
	if err != nil && (errors.Is(err, context.Canceled) || req.Context().Err() != nil) {
		return // our own cancellation (shutdown, informer restart)
	}
	key := req.Method + " " + req.URL.Path
	h.mu.Lock()
	changed := false
	switch {
	case err != nil || resp.StatusCode >= 500:
		if err == nil {
			err = fmt.Errorf("%s %s: %s", req.Method, req.URL.Path, resp.Status)
		}
		if h.down == nil {
			h.downSince = time.Now()
			changed = true
		}
		h.down = err
	default:
		if h.down != nil {
			h.down, changed = nil, true
		}
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			if _, ok := h.denied[key]; !ok {
				if len(h.deniedOrder) >= maxDenied {
					delete(h.denied, h.deniedOrder[0])
					h.deniedOrder = h.deniedOrder[1:]
				}
				h.deniedOrder = append(h.deniedOrder, key)
				changed = true
			}
			h.denied[key] = "refused: " + resp.Status
		default:
			if _, ok := h.denied[key]; ok && resp.StatusCode < 300 {
				delete(h.denied, key)
				for i, k := range h.deniedOrder {
					if k == key {
						h.deniedOrder = append(h.deniedOrder[:i], h.deniedOrder[i+1:]...)
						break
					}
				}
				changed = true
			}
		}
	}
	h.mu.Unlock()
	if changed {
		h.notify()
	}
}

// wrap is a rest.Config transport wrapper feeding h.
func (h *Health) wrap(rt http.RoundTripper) http.RoundTripper { return observed{rt, h} }

type observed struct {
	rt http.RoundTripper
	h  *Health
}

func (o observed) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := o.rt.RoundTrip(req)
	o.h.observe(req, resp, err)
	return resp, err
}

// Probe GETs /version every ProbeInterval until ctx is done, so that an
// API server that stops answering is noticed even while no list or watch
// is running (an established watch only fails when its stream breaks).
// rc is any of the client's REST clients (the path is absolute).
func (h *Health) Probe(ctx context.Context, rc rest.Interface) {
	t := time.NewTicker(ProbeInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
		err := rc.Get().AbsPath("/version").Do(pctx).Error()
		cancel()
		if err != nil && ctx.Err() == nil && strings.Contains(err.Error(), "deadline exceeded") {
			// The transport saw a cancelled request and ignored it: a
			// hung API server is an outage too.
			h.mu.Lock()
			if h.down == nil {
				h.downSince = time.Now()
				h.down = fmt.Errorf("GET /version: no answer within %v", ProbeTimeout)
				h.mu.Unlock()
				h.notify()
				continue
			}
			h.mu.Unlock()
		}
	}
}
