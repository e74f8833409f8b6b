package consul

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/consul/api"
)

// fakeConsul is an in-memory Consul HTTP API for unit tests of the watch
// loops (used inside testing/synctest bubbles, so it never touches the
// network): /v1/catalog/services, /v1/health/service/<name> and
// /v1/kv/<prefix>?recurse, with blocking queries on one global index.
type fakeConsul struct {
	mu       sync.Mutex
	index    uint64
	changed  chan struct{} // closed and replaced on every change
	services map[string][]*api.ServiceEntry
	kv       map[string]string
	// fail, while positive, makes that many requests answer 500.
	fail int
	// hang makes blocking requests ignore wait and changes: they end only
	// when the client gives up (a dead TCP connection, case 019).
	hang bool
	// log records every request as "path?index=N" with its time.
	log []fakeRequest
	// inflight and maxInflight count health requests being served.
	inflight, maxInflight int
}

type fakeRequest struct {
	at    time.Time
	path  string
	index string
	err   bool
}

func newFakeConsul() *fakeConsul {
	return &fakeConsul{index: 1, changed: make(chan struct{}), services: map[string][]*api.ServiceEntry{}, kv: map[string]string{}}
}

// update changes the state under the lock and wakes blocked queries.
func (f *fakeConsul) update(change func(f *fakeConsul)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f)
	f.index++
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeConsul) requests() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.log...)
}

// client returns an API client whose transport calls f directly.
func (f *fakeConsul) client() *api.Client {
	cfg := api.DefaultNonPooledConfig()
	cfg.HttpClient = &http.Client{Transport: handlerTransport{f}}
	c, err := api.NewClient(cfg)
	if err != nil {
		panic(err)
	}
	return c
}

type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	return rec.Result(), nil
}

func (f *fakeConsul) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	req := fakeRequest{at: time.Now(), path: r.URL.Path, index: q.Get("index")}
	if f.fail > 0 {
		f.fail--
		req.err = true
		f.log = append(f.log, req)
		f.mu.Unlock()
		http.Error(w, "rpc error: no cluster leader", http.StatusInternalServerError)
		return
	}
	f.log = append(f.log, req)
	if strings.HasPrefix(r.URL.Path, "/v1/health/") {
		f.inflight++
		f.maxInflight = max(f.maxInflight, f.inflight)
		defer func() {
			f.mu.Lock()
			f.inflight--
			f.mu.Unlock()
		}()
	}
	hang := f.hang
	idx, _ := strconv.ParseUint(q.Get("index"), 10, 64)
	wait, _ := time.ParseDuration(q.Get("wait"))
	changed := f.changed
	blocking := idx > 0 && idx >= f.index
	f.mu.Unlock()
	switch {
	case hang && blocking:
		<-r.Context().Done()
		return
	case blocking:
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-changed:
		case <-t.C:
		case <-r.Context().Done():
			return
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("X-Consul-Index", strconv.FormatUint(f.index, 10))
	var body any
	switch path := r.URL.Path; {
	case path == "/v1/catalog/services":
		m := map[string][]string{}
		for name, es := range f.services {
			m[name] = []string{}
			for _, e := range es {
				m[name] = append(m[name], e.Service.Tags...)
			}
		}
		body = m
	case strings.HasPrefix(path, "/v1/health/service/"):
		es := f.services[strings.TrimPrefix(path, "/v1/health/service/")]
		if es == nil {
			es = []*api.ServiceEntry{}
		}
		body = es
	case strings.HasPrefix(path, "/v1/kv/"):
		prefix := strings.TrimPrefix(path, "/v1/kv/")
		var pairs []*api.KVPair
		for k, v := range f.kv {
			if strings.HasPrefix(k, prefix) {
				pairs = append(pairs, &api.KVPair{Key: k, Value: []byte(v)})
			}
		}
		if len(pairs) == 0 {
			http.Error(w, "", http.StatusNotFound)
			return
		}
		body = pairs
	default:
		http.Error(w, errors.New("unexpected path").Error(), http.StatusNotFound)
		return
	}
	_ = json.NewEncoder(w).Encode(body)
}

// entry is a healthy instance of service name on node n at addr:port.
func entry(node, id, name, addr string, port int, tags ...string) *api.ServiceEntry {
	return &api.ServiceEntry{
		Node:    &api.Node{Node: node, Address: addr},
		Service: &api.AgentService{ID: id, Service: name, Address: addr, Port: port, Tags: tags},
		Checks:  api.HealthChecks{{Node: node, CheckID: "serfHealth", Status: api.HealthPassing}},
	}
}
