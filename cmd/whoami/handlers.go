package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// benchBody is the fixed body of /bench.
var benchBody = []byte(strings.Repeat("0123456789abcdef", 64)) // 1024 bytes

// maxDataSize bounds /data answers (bytes) so a typo cannot exhaust memory
// or the network: 1 GiB.
const maxDataSize = 1 << 30

// server holds the state shared by the handlers.
type server struct {
	name     string
	hostname string
	ips      []string
	health   atomic.Int64 // status code answered by GET /health
	upgrader websocket.Upgrader
}

func newServer(name string) http.Handler {
	s := &server{name: name}
	s.hostname, _ = os.Hostname()
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				s.ips = append(s.ips, ipn.IP.String())
			}
		}
	}
	s.health.Store(http.StatusOK)
	// Test backend: any Origin may open a WebSocket.
	s.upgrader.CheckOrigin = func(*http.Request) bool { return true }

	mux := http.NewServeMux()
	mux.HandleFunc("/", s.echo)
	mux.HandleFunc("/api", s.api)
	mux.HandleFunc("/health", s.healthz)
	mux.HandleFunc("/data", s.data)
	mux.HandleFunc("/bench", s.bench)
	mux.HandleFunc("/ws", s.ws)
	mux.HandleFunc("/echo", s.ws)
	mux.HandleFunc("/events", s.events)
	return mux
}

// wait sleeps for the duration in ?wait= (Go syntax: 100ms, 2s), bounded by
// the request's context. It returns false when the client went away.
func wait(r *http.Request) bool {
	v := r.URL.Query().Get("wait")
	if v == "" {
		return true
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// echo writes the traefik/whoami text echo.
func (s *server) echo(w http.ResponseWriter, r *http.Request) {
	if !wait(r) {
		return
	}
	var b strings.Builder
	if s.name != "" {
		fmt.Fprintf(&b, "Name: %s\n", s.name)
	}
	fmt.Fprintf(&b, "Hostname: %s\n", s.hostname)
	for _, ip := range s.ips {
		fmt.Fprintf(&b, "IP: %s\n", ip)
	}
	fmt.Fprintf(&b, "RemoteAddr: %s\n", r.RemoteAddr)
	fmt.Fprintf(&b, "%s %s %s\n", r.Method, r.URL.RequestURI(), r.Proto)
	fmt.Fprintf(&b, "Host: %s\n", r.Host)
	for _, k := range slices.Sorted(maps.Keys(r.Header)) {
		for _, v := range r.Header[k] {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, b.String())
}

// apiAnswer is the JSON shape of /api (traefik/whoami's field names).
type apiAnswer struct {
	Hostname   string      `json:"hostname"`
	IP         []string    `json:"ip"`
	Headers    http.Header `json:"headers"`
	URL        string      `json:"url"`
	Host       string      `json:"host"`
	Method     string      `json:"method"`
	Name       string      `json:"name"`
	RemoteAddr string      `json:"remoteAddr"`
}

func (s *server) api(w http.ResponseWriter, r *http.Request) {
	if !wait(r) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(apiAnswer{
		Hostname: s.hostname, IP: s.ips, Headers: r.Header, URL: r.URL.RequestURI(),
		Host: r.Host, Method: r.Method, Name: s.name, RemoteAddr: r.RemoteAddr,
	})
}

// healthz answers GET/HEAD with the current health status and sets it on
// POST (body: a status code 100–599).
func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost, http.MethodPut:
		body, err := io.ReadAll(io.LimitReader(r.Body, 64))
		if err != nil {
			http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
			return
		}
		code, err := strconv.Atoi(strings.TrimSpace(string(body)))
		if err != nil || code < 100 || code > 599 {
			http.Error(w, fmt.Sprintf("body must be a status code 100-599, got %q", body), http.StatusBadRequest)
			return
		}
		s.health.Store(int64(code))
		fmt.Fprintf(w, "health set to %d\n", code)
	default:
		if !wait(r) {
			return
		}
		code := int(s.health.Load())
		w.WriteHeader(code)
		fmt.Fprintf(w, "%d %s\n", code, http.StatusText(code))
	}
}

// data writes size bytes (times unit) of filler.
func (s *server) data(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	size, err := strconv.ParseInt(q.Get("size"), 10, 64)
	if err != nil || size < 0 {
		http.Error(w, fmt.Sprintf("size must be a non-negative integer, got %q", q.Get("size")), http.StatusBadRequest)
		return
	}
	switch strings.ToUpper(q.Get("unit")) {
	case "", "B":
	case "KB":
		size <<= 10
	case "MB":
		size <<= 20
	case "GB":
		size <<= 30
	default:
		http.Error(w, fmt.Sprintf("unit must be KB, MB or GB, got %q", q.Get("unit")), http.StatusBadRequest)
		return
	}
	if size > maxDataSize {
		http.Error(w, fmt.Sprintf("size %d is above the limit of %d bytes", size, maxDataSize), http.StatusBadRequest)
		return
	}
	if q.Get("attachment") == "true" {
		w.Header().Set("Content-Disposition", "attachment; filename=data.txt")
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	chunk := []byte(strings.Repeat("|abcdefghijklmnopqrstuvwxyz0123456789", 1024))
	for size > 0 {
		n := min(size, int64(len(chunk)))
		if _, err := w.Write(chunk[:n]); err != nil {
			return
		}
		size -= n
	}
}

func (s *server) bench(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Content-Length", "1024")
	_, _ = w.Write(benchBody)
}

// ws echoes every WebSocket message back with its type until the peer
// closes. The 101 answer carries "X-Whoami-Name" (when --name is set) so a
// client can tell which backend it reached.
func (s *server) ws(w http.ResponseWriter, r *http.Request) {
	hdr := http.Header{}
	if s.name != "" {
		hdr.Set("X-Whoami-Name", s.name)
	}
	c, err := s.upgrader.Upgrade(w, r, hdr)
	if err != nil {
		return // Upgrade already answered with an error status
	}
	defer c.Close()
	for {
		typ, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		if err := c.WriteMessage(typ, msg); err != nil {
			return
		}
	}
}

// intParam is query parameter name as a whole number from 0 to hi, def
// when absent. The error, for a 400, reads "count must be 0-10000, got
// \"x\"" (unit after the range, e.g. " (ms)").
func intParam(q url.Values, name string, def, hi int, unit string) (int, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > hi {
		return 0, fmt.Errorf("%s must be 0-%d%s, got %q", name, hi, unit, v)
	}
	return n, nil
}

// events streams Server-Sent Events (https://html.spec.whatwg.org/multipage/server-sent-events.html):
// ?count= events (default 5, at most 10000), one every ?interval=
// milliseconds (default 100), each flushed when written.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	count, err := intParam(q, "count", 5, 10000, "")
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	interval, err := intParam(q, "interval", 100, 60000, " (ms)")
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	tick := time.NewTicker(time.Duration(max(interval, 1)) * time.Millisecond)
	defer tick.Stop()
	for i := range count {
		if i > 0 {
			select {
			case <-tick.C:
			case <-r.Context().Done():
				return
			}
		}
		fmt.Fprintf(w, "id: %d\nevent: tick\ndata: {\"n\":%d,\"name\":%q,\"at\":%q}\n\n", i, i, s.name, time.Now().UTC().Format(time.RFC3339Nano))
		if err := rc.Flush(); err != nil {
			return
		}
	}
}
