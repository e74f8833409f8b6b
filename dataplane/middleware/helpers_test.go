package middleware

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
)

// fakeResolver builds middlewares from a decoded configuration, with the
// cycle detection the dataplane's Generation does, and serves services
// from a map.
type fakeResolver struct {
	mws      map[string]*config.Middleware
	services map[string]http.Handler
	built    map[string]Middleware
	building map[string]bool
}

func (f *fakeResolver) Middleware(ctx context.Context, name string) (Middleware, error) {
	if m, ok := f.built[name]; ok {
		return m, nil
	}
	if f.building[name] {
		return nil, fmt.Errorf("middleware %q: reference cycle", name)
	}
	c, ok := f.mws[name]
	if !ok {
		return nil, fmt.Errorf("middleware %q does not exist", name)
	}
	f.building[name] = true
	defer delete(f.building, name)
	m, err := New(ctx, name, c, f)
	if err != nil {
		return nil, err
	}
	f.built[name] = m
	return m, nil
}

func (f *fakeResolver) Service(_ context.Context, name string) (http.Handler, error) {
	h, ok := f.services[name]
	if !ok {
		return nil, fmt.Errorf("service %q does not exist", name)
	}
	return h, nil
}

// resolverFrom decodes a YAML dynamic configuration (the file form) and
// returns a resolver over its middlewares.
func resolverFrom(t testing.TB, yml string) *fakeResolver {
	t.Helper()
	c, err := config.Decode([]byte(yml), config.YAML)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	f := &fakeResolver{mws: map[string]*config.Middleware{}, services: map[string]http.Handler{}, built: map[string]Middleware{}, building: map[string]bool{}}
	if c.HTTP != nil {
		for k, v := range c.HTTP.Middlewares {
			f.mws[k] = v
		}
	}
	return f
}

// echo is what the echo backend saw.
type echo struct {
	Method     string
	Host       string
	Path       string
	RawPath    string
	RequestURI string
	Header     http.Header
	Body       string
}

// echoBackend answers 200 with a JSON echo of the request.
func echoBackend(t testing.TB) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Server", "echo")
		_ = json.NewEncoder(w).Encode(echo{r.Method, r.Host, r.URL.Path, r.URL.RawPath, r.RequestURI, r.Header, string(b)})
	}))
	t.Cleanup(s.Close)
	return s
}

// proxyTo is the proxy stage: a reverse proxy to backend that passes the
// Host header and answers 502 when the backend cannot be reached, as the
// dataplane's service handler does.
func proxyTo(backend string) http.Handler {
	u, _ := url.Parse(backend)
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = pr.In.Host
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			w.WriteHeader(http.StatusBadGateway)
		},
	}
}

// front serves the named middlewares (first outermost) in front of a
// proxy to backend, as a router's chain does.
func front(t testing.TB, res *fakeResolver, backend string, names ...string) *httptest.Server {
	t.Helper()
	ms := make([]Middleware, len(names))
	for i, n := range names {
		m, err := res.Middleware(context.Background(), n)
		if err != nil {
			t.Fatalf("build %s: %v", n, err)
		}
		ms[i] = m
	}
	s := httptest.NewServer(Chain(proxyTo(backend), ms...))
	t.Cleanup(s.Close)
	return s
}

// client does not follow redirects and adds no Accept-Encoding.
var client = &http.Client{
	Transport:     &http.Transport{DisableCompression: true},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// do sends a request built by mod (may be nil) and returns the response
// with its body read.
func do(t testing.TB, method, rawURL string, body io.Reader, mod func(*http.Request)) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, body)
	if err != nil {
		t.Fatal(err)
	}
	if mod != nil {
		mod(req)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, string(b)
}

// seen decodes the echo backend's answer.
func seen(t testing.TB, body string) echo {
	t.Helper()
	var e echo
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("backend echo %q: %v", body, err)
	}
	return e
}

// withHeader returns a request modifier setting header pairs k, v, k, v…
func withHeader(kv ...string) func(*http.Request) {
	return func(r *http.Request) {
		for i := 0; i+1 < len(kv); i += 2 {
			if strings.EqualFold(kv[i], "Host") {
				r.Host = kv[i+1]
				continue
			}
			r.Header.Add(kv[i], kv[i+1])
		}
	}
}

// buildErr builds one middleware from YAML and returns New's error.
func buildErr(t testing.TB, yml, name string) error {
	t.Helper()
	res := resolverFrom(t, yml)
	_, err := res.Middleware(context.Background(), name)
	return err
}

// newServer serves h on a loopback test server closed at the end of the test.
func newServer(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}
