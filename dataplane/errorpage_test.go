package dataplane

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
	"github.com/gantry-proxy/gantry/dataplane/observe"
)

// errors.statusRewrites and errorRequestHeaders through the real chain:
// the client gets the page's body with the rewritten status, the page
// service sees only the listed headers, and the access-log event records
// the status actually sent. Retries of a retry middleware are counted.
func TestErrorPageStatusAndHeaders(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-App", "leaked")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, "app down")
	}))
	defer app.Close()
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "page %s keep=%q drop=%q", r.URL.RequestURI(), r.Header.Get("X-Keep"), r.Header.Get("X-Drop"))
	}))
	defer pages.Close()
	obs := &dptest.Recorder{}
	h := newHarness(t, nil, obs)
	defer dptest.CloseIdle()
	tbl := h.Apply(fmt.Sprintf(`
http:
  routers:
    some@file: {rule: "Host(`+"`some`"+`)", service: app@file, middlewares: [some@file]}
    none@file: {rule: "Host(`+"`none`"+`)", service: app@file, middlewares: [none@file]}
    all@file:  {rule: "Host(`+"`all`"+`)", service: app@file, middlewares: [all@file, retry@file]}
  middlewares:
    some@file:  {errors: {status: ["500-599"], statusRewrites: {"503": 500}, service: pages@file, query: "/{status}/{originalStatus}", errorRequestHeaders: [X-Keep]}}
    none@file:  {errors: {status: ["503"], service: pages@file, query: "/{status}", errorRequestHeaders: []}}
    all@file:   {errors: {status: ["503"], statusRewrites: {"500-599": 502}, service: pages@file, query: "/{status}"}}
    retry@file: {retry: {attempts: 3, status: ["503"]}}
  services:
    app@file:   {loadBalancer: {servers: [{url: %q}]}}
    pages@file: {loadBalancer: {servers: [{url: %q}]}}
`, app.URL, pages.URL), generation.Options{})
	for n, st := range tbl.Report().Routers {
		if st.Status != "enabled" {
			t.Fatalf("router %s: %+v", n, st)
		}
	}
	tests := []struct {
		host, body string
		code       int
	}{
		{"some", `page /500/503 keep="k" drop=""`, 500},
		{"none", `page /503 keep="" drop=""`, 503},
		{"all", `page /502 keep="k" drop="d"`, 502},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(http.MethodGet, "http://"+h.Addr("web")+"/x", nil)
		req.Host = tt.host
		req.Header.Set("X-Keep", "k")
		req.Header.Set("X-Drop", "d")
		resp, err := dptest.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.code || string(b) != tt.body || resp.Header.Get("X-App") != "" {
			t.Errorf("%s: %d %q (X-App %q), want %d %q and no header of the caught answer", tt.host, resp.StatusCode, b, resp.Header.Get("X-App"), tt.code, tt.body)
		}
		ev, ok := obs.Find(func(e observe.RequestEvent) bool { return strings.HasPrefix(e.Router, tt.host+"@") })
		if !ok || ev.Status != tt.code {
			t.Errorf("%s: access-log status %d, want the %d sent", tt.host, ev.Status, tt.code)
		}
		if tt.host == "all" && ev.Retries != 2 {
			t.Errorf("retries recorded %d, want 2", ev.Retries)
		}
	}
}

// Case 041 and issue 26: the request event of an errors-middleware answer
// records what the router's service answered (OriginStatus 502, the dead
// server's) beside the status sent (503 after statusRewrites), and the page
// call as a call to its own service with the page service's status.
func TestErrorPageEventRecordsEachServiceAnswer(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "page") }))
	defer page.Close()
	obs := &dptest.Recorder{}
	h := newHarness(t, nil, obs)
	h.Apply(fmt.Sprintf(`
http:
  routers: {shop@file: {rule: "Host(`+"`shop`"+`)", service: shop@file, middlewares: [pages@file]}}
  middlewares:
    pages@file: {errors: {status: ["500-599"], service: errsvc@file, statusRewrites: {"502": 503}}}
  services:
    shop@file:   {loadBalancer: {servers: [{url: "http://%s"}]}}
    errsvc@file: {loadBalancer: {servers: [{url: %q}]}}
`, dptest.DeadAddr(t), page.URL), generation.Options{})
	if code, body := h.Get("web", "shop", "/"); code != 503 || body != "page" {
		t.Fatalf("got %d %q, want 503 and the page", code, body)
	}
	var ev observe.RequestEvent
	dptest.Eventually(t, "the request event", func() bool {
		var ok bool
		ev, ok = obs.Find(func(e observe.RequestEvent) bool { return e.Host == "shop" })
		return ok
	})
	if ev.Status != 503 || ev.OriginStatus != 502 || ev.ServiceStatus() != 502 {
		t.Errorf("event status %d origin %d, want 503 sent and 502 from shop@file", ev.Status, ev.OriginStatus)
	}
	if len(ev.Calls) != 1 || ev.Calls[0].Service != "errsvc@file" || ev.Calls[0].Status != 200 || ev.Calls[0].Bytes != 4 {
		t.Errorf("calls %+v, want one call to errsvc@file answered 200 with 4 bytes", ev.Calls)
	}
}
