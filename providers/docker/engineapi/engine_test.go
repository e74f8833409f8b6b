package engineapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gantry-proxy/gantry/config/label"
)

func TestMain(m *testing.M) {
	if sock := os.Getenv(fakeSSHEnv); sock != "" {
		os.Exit(fakeSSH(sock))
	}
	goleak.VerifyTestMain(m)
}

// engine is a fake Docker engine on a unix socket: it answers /_ping with
// apiVersion (no header when ""), records every request and hands the
// others to handle.
type engine struct {
	t          *testing.T
	apiVersion string
	handle     http.HandlerFunc
	mu         sync.Mutex
	reqs       []*http.Request
	endpoint   string
}

func newEngine(t *testing.T, apiVersion string, handle http.HandlerFunc) *engine {
	t.Helper()
	e := &engine{t: t, apiVersion: apiVersion, handle: handle}
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(e.serve))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	e.endpoint = "unix://" + sock
	return e
}

func (e *engine) serve(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.reqs = append(e.reqs, r.Clone(context.Background()))
	e.mu.Unlock()
	if r.URL.Path == "/_ping" {
		if e.apiVersion != "" {
			w.Header().Set("API-Version", e.apiVersion)
		}
		_, _ = io.WriteString(w, "OK")
		return
	}
	e.handle(w, r)
}

// paths returns the request paths (with their query) in order.
func (e *engine) paths() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, r := range e.reqs {
		out = append(out, r.URL.RequestURI())
	}
	return out
}

func newClient(t *testing.T, o Options) *Client {
	t.Helper()
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// The API version is the lower of the engine's and MaxAPIVersion, 1.24
// without a header; a call before any ping negotiates first.
func TestVersionNegotiation(t *testing.T) {
	for _, tc := range []struct{ server, want string }{
		{"1.43", "1.43"}, {"1.99", MaxAPIVersion}, {"2.0", MaxAPIVersion}, {"1.9", "1.9"}, {"", "1.24"},
	} {
		e := newEngine(t, tc.server, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, []Summary{}) })
		c := newClient(t, Options{Endpoint: e.endpoint})
		if _, err := c.ContainerList(context.Background()); err != nil {
			t.Fatalf("server %q: %v", tc.server, err)
		}
		want := []string{"/_ping", "/v" + tc.want + "/containers/json?all=1"}
		if got := e.paths(); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("server %q: requests %q, want %q", tc.server, got, want)
		}
		if c.Version() != tc.want {
			t.Errorf("server %q: Version %q, want %q", tc.server, c.Version(), tc.want)
		}
	}
	e := newEngine(t, "1.41/../../x", nil)
	_, err := newClient(t, Options{Endpoint: e.endpoint}).Ping(context.Background())
	if err == nil || !strings.Contains(err.Error(), "API-Version header") || !strings.Contains(err.Error(), e.endpoint) {
		t.Errorf("bad API-Version: got %v", err)
	}
}

// Custom headers go with every request; requests over a socket name the
// official client's host.
func TestHeadersSent(t *testing.T) {
	e := newEngine(t, "1.45", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, Container{ID: "abc"}) })
	c := newClient(t, Options{Endpoint: e.endpoint, Headers: map[string]string{"User-Agent": "Gantry", "Authorization": "Basic dTpw"}})
	if _, err := c.ContainerInspect(context.Background(), "abc"); err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.reqs) != 2 {
		t.Fatalf("%d requests, want ping and inspect", len(e.reqs))
	}
	for _, r := range e.reqs {
		if r.UserAgent() != "Gantry" || r.Header.Get("Authorization") != "Basic dTpw" || r.Host != dummyHost || r.Method != http.MethodGet {
			t.Errorf("%s %s: host %q, headers %v", r.Method, r.URL, r.Host, r.Header)
		}
	}
}

// List and inspect decode the fields Gantry reads under their JSON names.
func TestListAndInspectDecode(t *testing.T) {
	e := newEngine(t, "1.51", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1.51/containers/json":
			_, _ = io.WriteString(w, `[{"Id":"abc","Names":["/web"],"Image":"x","State":"running","Status":"Up 3 minutes (healthy)",
				"Ports":[{"IP":"0.0.0.0","PrivatePort":80,"PublicPort":8080,"Type":"tcp"}],
				"Labels":{"a":"b"},"NetworkSettings":{"Networks":{"bridge":{"IPAddress":"172.17.0.2","GlobalIPv6Address":""}}}}]`)
		case "/v1.51/containers/abc/json":
			_, _ = io.WriteString(w, `{"Id":"abc","Name":"/web","State":{"Status":"running","Health":{"Status":"healthy","Log":[{"ExitCode":0,"Output":"ok"}]}},
				"HostConfig":{"NetworkMode":"bridge"},"Config":{"Labels":{"a":"b"},"ExposedPorts":{"80/tcp":{}}},
				"NetworkSettings":{"Ports":{"80/tcp":[{"HostIp":"0.0.0.0","HostPort":"8080"}]},"Networks":{"bridge":{"IPAddress":"172.17.0.2"}}}}`)
		default:
			http.NotFound(w, r)
		}
	})
	c := newClient(t, Options{Endpoint: e.endpoint})
	ctx := context.Background()
	list, err := c.ContainerList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != "abc" || list[0].Names[0] != "/web" || list[0].State != "running" ||
		list[0].Status != "Up 3 minutes (healthy)" || list[0].Ports[0] != (Port{IP: "0.0.0.0", PrivatePort: 80, PublicPort: 8080, Type: "tcp"}) ||
		list[0].NetworkSettings.Networks["bridge"].IPAddress != "172.17.0.2" {
		t.Errorf("list: %+v", list)
	}
	in, err := c.ContainerInspect(ctx, "abc")
	if err != nil {
		t.Fatal(err)
	}
	if in.ID != "abc" || in.Name != "/web" || in.State.Status != "running" || in.State.Health.Status != "healthy" ||
		in.State.Health.Log[0].Output != "ok" || in.HostConfig.NetworkMode != "bridge" || in.Config.Labels["a"] != "b" ||
		len(in.Config.ExposedPorts) != 1 || in.NetworkSettings.Ports["80/tcp"][0] != (PortBinding{HostIP: "0.0.0.0", HostPort: "8080"}) ||
		in.NetworkSettings.Networks["bridge"].IPAddress != "172.17.0.2" {
		t.Errorf("inspect: %+v", in)
	}
}

// A 404 is ErrNotFound, with the engine's message; errors name the
// endpoint and the call.
func TestNotFound(t *testing.T) {
	e := newEngine(t, "1.51", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"message":"No such container: gone"}`)
	})
	_, err := newClient(t, Options{Endpoint: e.endpoint}).ContainerInspect(context.Background(), "gone")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("got %v, want ErrNotFound", err)
	}
	for _, want := range []string{e.endpoint, "inspect container gone", "/v1.51/containers/gone/json", "404", "No such container: gone"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	e = newEngine(t, "1.51", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/elsewhere" {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		writeJSON(w, []Summary{{ID: "redirected"}})
	})
	if _, err := newClient(t, Options{Endpoint: e.endpoint}).ContainerList(context.Background()); err == nil || !strings.Contains(err.Error(), "status 302") {
		t.Errorf("redirect: got %v, want status 302", err)
	}
	e = newEngine(t, "1.51", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) })
	_, err = newClient(t, Options{Endpoint: e.endpoint}).ContainerList(context.Background())
	if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "list containers") || !strings.Contains(err.Error(), "boom") {
		t.Errorf("500: got %v", err)
	}
}

// An engine that cannot be reached is named with the call.
func TestCannotConnect(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "none.sock")
	_, err := newClient(t, Options{Endpoint: "unix://" + sock}).Ping(context.Background())
	if err == nil || !strings.Contains(err.Error(), "cannot connect to the Docker daemon") || !strings.Contains(err.Error(), "unix://"+sock+": ping") {
		t.Errorf("got %v", err)
	}
	for _, bad := range []string{"", "/var/run/docker.sock", "ssh://", "npipe:////./pipe/docker"} {
		if _, err := New(Options{Endpoint: bad}); err == nil {
			t.Errorf("New(%q) succeeded", bad)
		}
	}
}

// shrink lowers the limits for one test.
func shrink(t *testing.T, object, list int64, containers int) {
	o, l, c := maxObjectBytes, maxListBytes, maxContainers
	maxObjectBytes, maxListBytes, maxContainers = object, list, containers
	t.Cleanup(func() { maxObjectBytes, maxListBytes, maxContainers = o, l, c })
}

// Responses over the limits are errors naming the limit, read no further.
func TestResponseLimits(t *testing.T) {
	shrink(t, 1000, 5000, 20)
	entry := `{"Id":"` + strings.Repeat("a", 900) + `"}`
	var body string
	e := newEngine(t, "1.51", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, body) })
	c := newClient(t, Options{Endpoint: e.endpoint})
	ctx := context.Background()
	for _, tc := range []struct{ name, body, want string }{
		{"entries under the limits", "[" + entry + "," + entry + "]", ""},
		{"entry over", `[{"Id":"` + strings.Repeat("a", 1000) + `"}]`, "a value over 1000 bytes"},
		{"list over", "[" + strings.Repeat(entry+",", 6) + entry + "]", "a response over 5000 bytes"},
		{"too many", "[" + strings.Repeat("{},", 20) + "{}]", "over 20 containers"},
		{"not a list", `{"Id":"x"}`, "want a JSON list"},
		{"truncated", "[" + entry[:100], "unexpected EOF"},
	} {
		body = tc.body
		list, err := c.ContainerList(ctx)
		if tc.want == "" {
			if err != nil || len(list) != 2 {
				t.Errorf("%s: %d entries, %v", tc.name, len(list), err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "list containers") {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	body = `{"Id":"` + strings.Repeat("a", 2000) + `"}`
	if _, err := c.ContainerInspect(ctx, "x"); err == nil || !strings.Contains(err.Error(), "a value over 1000 bytes") {
		t.Errorf("inspect over the limit: got %v", err)
	}
}

// A container's labels (up to label.MaxTotalBytes) fit in one object.
func TestObjectLimitHoldsLabels(t *testing.T) {
	if maxObjectBytes < 2*label.MaxTotalBytes {
		t.Errorf("maxObjectBytes %d < 2 × label.MaxTotalBytes", maxObjectBytes)
	}
}

// The event stream asks for the types, delivers events in order and ends
// with one error: the engine closed it, a truncated event or one over the
// limit.
func TestEvents(t *testing.T) {
	shrink(t, 200, 0, 0)
	ev := `{"Type":"container","Action":"start","Actor":{"ID":"abc","Attributes":{"name":"web"}},"time":1}` + "\n"
	for _, tc := range []struct {
		name, tail string
		want       error
		wantText   string
	}{
		{"closed", "", io.EOF, "stream ended"},
		{"truncated", `{"Type":"container","Act`, io.ErrUnexpectedEOF, "unexpected EOF"},
		{"oversized", `{"Type":"container","Action":"` + strings.Repeat("x", 200) + `"}`, nil, "a value over 200 bytes"},
	} {
		e := newEngine(t, "1.44", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, ev+`{"Type":"network","Action":"connect"}`+"\n")
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, tc.tail)
		})
		c := newClient(t, Options{Endpoint: e.endpoint})
		evs, errs := c.Events(context.Background(), "container", "network")
		var got []Event
		var err error
		for err == nil {
			select {
			case e := <-evs:
				got = append(got, e)
			case err = <-errs:
			case <-time.After(30 * time.Second):
				t.Fatalf("%s: no error after %v", tc.name, got)
			}
		}
		if fmt.Sprint(got) != "[{container start} {network connect}]" {
			t.Errorf("%s: events %v", tc.name, got)
		}
		if (tc.want != nil && !errors.Is(err, tc.want)) || !strings.Contains(err.Error(), tc.wantText) || !strings.Contains(err.Error(), "events") {
			t.Errorf("%s: error %v, want %v (%q)", tc.name, err, tc.want, tc.wantText)
		}
		if p := e.paths(); len(p) != 2 || p[1] != `/v1.44/events?filters=%7B%22type%22%3A%7B%22container%22%3Atrue%2C%22network%22%3Atrue%7D%7D` {
			t.Errorf("%s: requests %q", tc.name, p)
		}
	}
}

// Cancelling the context or closing the client ends a stream without an
// error; Close waits for its goroutine (goleak checks none is left).
func TestEventsEnd(t *testing.T) {
	e := newEngine(t, "1.51", func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	c := newClient(t, Options{Endpoint: e.endpoint})
	ctx, cancel := context.WithCancel(context.Background())
	_, errs := c.Events(ctx, "container")
	_, errs2 := c.Events(context.Background(), "container")
	cancel()
	c.Close()
	select {
	case err := <-errs:
		t.Errorf("cancelled stream: %v", err)
	case err := <-errs2:
		t.Errorf("closed stream: %v", err)
	default:
	}
}

// With TLS options the client speaks HTTPS to a tcp:// endpoint and checks
// the engine's certificate against the CA (or not, when told).
func TestTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("API-Version", "1.47")
	}))
	defer srv.Close()
	endpoint := "tcp://" + srv.Listener.Addr().String()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		tls  *tls.Config
		ok   bool
	}{
		{"trusted CA", &tls.Config{RootCAs: pool}, true},
		{"insecureSkipVerify", &tls.Config{InsecureSkipVerify: true}, true},
		{"unknown CA", &tls.Config{}, false},
		{"plain HTTP", nil, false},
	} {
		c := newClient(t, Options{Endpoint: endpoint, TLS: tc.tls})
		_, err := c.Ping(ctx)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
		if tc.ok && c.Version() != "1.47" {
			t.Errorf("%s: version %q", tc.name, c.Version())
		}
	}
}

// TestCallTimeout: an engine that accepts and then says nothing, or
// trickles a list, makes ping and list an error naming the call once
// callTimeout has passed, without Options.Timeout.
func TestCallTimeout(t *testing.T) {
	old := callTimeout
	callTimeout = 200 * time.Millisecond
	t.Cleanup(func() { callTimeout = old })

	sock := filepath.Join(t.TempDir(), "silent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	t.Cleanup(func() {
		l.Close()
		for c := range accepted {
			c.Close()
		}
	})
	_, err = newClient(t, Options{Endpoint: "unix://" + sock}).Ping(context.Background())
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), ": ping (GET /_ping)") {
		t.Errorf("silent engine: ping error %v, want a deadline naming the call", err)
	}

	e := newEngine(t, "1.45", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("["))
		for {
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
				w.Write([]byte(" "))
			}
		}
	})
	_, err = newClient(t, Options{Endpoint: e.endpoint}).ContainerList(context.Background())
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "list containers") {
		t.Errorf("trickling engine: list error %v, want a deadline naming the call", err)
	}
}
