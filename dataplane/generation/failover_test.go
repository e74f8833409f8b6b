package generation_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// failover.errors (Traefik v3.7): a primary answering 503 hands the
// request, body included, to the fallback; other answers pass through;
// a body above maxRequestBodyBytes is streamed to the primary once.
func TestFailoverByStatus(t *testing.T) {
	var primaryCode atomic.Int32
	primaryCode.Store(http.StatusServiceUnavailable)
	primary := &backendLog{serv: func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-From", "primary")
		w.Header().Set("Set-Cookie", "primary=1")
		w.WriteHeader(int(primaryCode.Load()))
		fmt.Fprint(w, "primary says no")
	}}
	var fallbackBody atomic.Pointer[string]
	fallback := &backendLog{serv: func(_ int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-From", "fallback")
		fmt.Fprint(w, "fallback")
	}}
	sp, sf := httptest.NewServer(primary), httptest.NewServer(fallback)
	defer sp.Close()
	defer sf.Close()
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s := string(b)
		fallbackBody.Store(&s)
		fmt.Fprint(w, s)
	}))
	defer echo.Close()
	h := newHarness(t, nil, nil)
	tbl := h.Apply(fmt.Sprintf(`
http:
  routers:
    fo@file:   {rule: "Host(`+"`fo`"+`)", service: fo@file}
    echo@file: {rule: "Host(`+"`echo`"+`)", service: foecho@file}
  services:
    primary@file:  {loadBalancer: {servers: [{url: %q}]}}
    fallback@file: {loadBalancer: {servers: [{url: %q}]}}
    echo@file:     {loadBalancer: {servers: [{url: %q}]}}
    fo@file:     {failover: {service: primary@file, fallback: fallback@file, errors: {status: ["502-504"]}}}
    foecho@file: {failover: {service: primary@file, fallback: echo@file, errors: {status: ["503"], maxRequestBodyBytes: 1024}}}
`, sp.URL, sf.URL, echo.URL), generation.Options{})
	for name, st := range tbl.Report().Routers {
		if st.Status != "enabled" {
			t.Fatalf("router %s: %+v", name, st)
		}
	}
	get := func(host, method, body string) (*http.Response, string) {
		req, _ := http.NewRequest(method, "http://"+h.Addr("web")+"/", strings.NewReader(body))
		req.Host = host
		resp, err := dptest.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := get("fo", http.MethodGet, "")
	if resp.StatusCode != 200 || body != "fallback" || resp.Header.Get("X-From") != "fallback" || resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("primary 503: got %d %q %v, want the fallback's answer alone", resp.StatusCode, body, resp.Header)
	}
	if primary.count() != 1 || fallback.count() != 1 {
		t.Errorf("primary got %d, fallback %d requests, want 1 and 1", primary.count(), fallback.count())
	}
	// A status outside the list is the client's answer.
	primaryCode.Store(http.StatusNotFound)
	if resp, body := get("fo", http.MethodGet, ""); resp.StatusCode != 404 || body != "primary says no" {
		t.Errorf("primary 404: got %d %q, want it passed through", resp.StatusCode, body)
	}
	// The POST body reaches the fallback intact.
	primaryCode.Store(http.StatusServiceUnavailable)
	payload := strings.Repeat("p", 1000)
	if resp, body := get("echo", http.MethodPost, payload); resp.StatusCode != 200 || body != payload {
		t.Errorf("POST failed over: %d, body %d bytes, want 200 and the same %d bytes", resp.StatusCode, len(body), len(payload))
	}
	// Above maxRequestBodyBytes: the primary's 503 goes to the client.
	primary.reset()
	fallbackBody.Store(nil)
	if resp, _ := get("echo", http.MethodPost, strings.Repeat("b", 4096)); resp.StatusCode != 503 || primary.count() != 1 || fallbackBody.Load() != nil {
		t.Errorf("large body: %d, primary got %d, fallback called %v; want 503, 1, not called", resp.StatusCode, primary.count(), fallbackBody.Load() != nil)
	}
	// A bad status range disables the service and its router.
	tbl = h.Apply(`
http:
  routers: {fo@file: {rule: "Host(`+"`fo`"+`)", service: fo@file}}
  services:
    a@file: {loadBalancer: {servers: [{url: "http://127.0.0.1:1"}]}}
    fo@file: {failover: {service: a@file, fallback: a@file, errors: {status: ["5xx"]}}}
`, generation.Options{})
	if st := tbl.Report().Routers["fo@file"]; st.Status != "disabled" || !strings.Contains(strings.Join(st.Errors, ";"), "failover.errors.status[0]") {
		t.Errorf("bad status: %+v", st)
	}
}

// Case 061 and issue 26: a failover whose main service can never report
// itself down (a loadBalancer without healthCheck) and that has no
// errors.status is refused, as Traefik refuses it, with an error naming
// both services — it never serves 502 forever from a dead main. With
// errors.status the main's 502 hands the request to the fallback; with a
// health-checked main it is accepted; healthCheck on the failover itself
// requires a fallback that reports its health.
func TestFailoverNeedsAWayToFailOver(t *testing.T) {
	fb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "fallback") }))
	defer fb.Close()
	h := newHarness(t, nil, nil)
	tbl := h.Apply(fmt.Sprintf(`
http:
  routers:
    nohc@file:   {rule: "Host(`+"`nohc`"+`)", service: fo-nohc@file}
    errref@file: {rule: "Host(`+"`errref`"+`)", service: fo-errref@file}
    hc@file:     {rule: "Host(`+"`hc`"+`)", service: fo-hc@file}
    fbnohc@file: {rule: "Host(`+"`fbnohc`"+`)", service: fo-fbnohc@file}
    both@file:   {rule: "Host(`+"`both`"+`)", service: fo-both@file}
  services:
    main-nohc@file: {loadBalancer: {servers: [{url: "http://127.0.0.1:1"}]}}
    main-hc@file:   {loadBalancer: {servers: [{url: "http://127.0.0.1:1"}], healthCheck: {path: /health, interval: 1h}}}
    fb@file:        {loadBalancer: {servers: [{url: %q}]}}
    fb-hc@file:     {loadBalancer: {servers: [{url: %q}], healthCheck: {path: /, interval: 1h}}}
    fo-nohc@file:   {failover: {service: main-nohc@file, fallback: fb@file}}
    fo-errref@file: {failover: {service: main-nohc@file, fallback: fb@file, errors: {status: ["502"]}}}
    fo-hc@file:     {failover: {service: main-hc@file, fallback: fb@file}}
    fo-fbnohc@file: {failover: {service: main-hc@file, fallback: fb@file, healthCheck: {}}}
    fo-both@file:   {failover: {service: main-hc@file, fallback: fb-hc@file, healthCheck: {}}}
`, fb.URL, fb.URL), generation.Options{})
	rep := tbl.Report().Routers
	for name, want := range map[string]string{
		"nohc@file":   "main service main-nohc@file has no healthCheck",
		"fbnohc@file": "fallback service fb@file has no healthCheck",
	} {
		st := rep[name]
		if errs := strings.Join(st.Errors, ";"); st.Status != "disabled" || !strings.Contains(errs, want) || !strings.Contains(errs, "fo-") {
			t.Errorf("router %s: %+v, want disabled with %q naming the failover", name, st, want)
		}
	}
	for _, name := range []string{"errref@file", "hc@file", "both@file"} {
		if st := rep[name]; st.Status != "enabled" {
			t.Errorf("router %s: %+v, want enabled", name, st)
		}
	}
	if code, body := h.Get("web", "errref", "/"); code != 200 || body != "fallback" {
		t.Errorf("errors.status 502 with a dead main: %d %q, want the fallback's 200", code, body)
	}
	if code, _ := h.Get("web", "nohc", "/"); code != http.StatusNotFound {
		t.Errorf("refused failover: %d, want 404 (its router is not built)", code)
	}
}
