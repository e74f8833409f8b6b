package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

func newTest(t *testing.T) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(newServer("w1"))
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, url string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestEcho(t *testing.T) {
	ts := newTest(t)
	_, body := get(t, ts.URL+"/some/path?x=1", "X-Test", "a", "X-Test", "b")
	for _, want := range []string{
		"Name: w1\n",
		"Hostname: ",
		"IP: 127.0.0.1\n",
		"RemoteAddr: 127.0.0.1:",
		"GET /some/path?x=1 HTTP/1.1\n",
		"Host: " + strings.TrimPrefix(ts.URL, "http://") + "\n",
		"X-Test: a\nX-Test: b\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("echo lacks %q; got:\n%s", want, body)
		}
	}
}

func TestAPI(t *testing.T) {
	ts := newTest(t)
	_, body := get(t, ts.URL+"/api?q=1", "X-A", "1")
	var a apiAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatalf("decode %q: %v", body, err)
	}
	if a.Name != "w1" || a.URL != "/api?q=1" || a.Method != "GET" || a.Headers.Get("X-A") != "1" {
		t.Errorf("got %+v", a)
	}
}

func TestHealthSettable(t *testing.T) {
	ts := newTest(t)
	if resp, _ := get(t, ts.URL+"/health"); resp.StatusCode != 200 {
		t.Fatalf("initial health: got %d, want 200", resp.StatusCode)
	}
	resp, err := http.Post(ts.URL+"/health", "text/plain", strings.NewReader("503"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST /health: got %d", resp.StatusCode)
	}
	if resp, _ := get(t, ts.URL+"/health"); resp.StatusCode != 503 {
		t.Fatalf("after POST 503: got %d, want 503", resp.StatusCode)
	}
	resp, err = http.Post(ts.URL+"/health", "text/plain", strings.NewReader("nope"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("POST bad body: got %d, want 400", resp.StatusCode)
	}
}

func TestDataAndBench(t *testing.T) {
	ts := newTest(t)
	tests := []struct {
		name   string
		path   string
		status int
		size   int
	}{
		{"bytes", "/data?size=10", 200, 10},
		{"kb", "/data?size=3&unit=KB", 200, 3072},
		{"zero", "/data?size=0", 200, 0},
		{"bad size", "/data?size=x", 400, -1},
		{"bad unit", "/data?size=1&unit=PB", 400, -1},
		{"too big", "/data?size=2&unit=GB", 400, -1},
		{"bench", "/bench", 200, 1024},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := get(t, ts.URL+tt.path)
			if resp.StatusCode != tt.status {
				t.Fatalf("got status %d, want %d (%s)", resp.StatusCode, tt.status, body)
			}
			if tt.size >= 0 && len(body) != tt.size {
				t.Errorf("got %d bytes, want %d", len(body), tt.size)
			}
		})
	}
}

func TestWebSocketEcho(t *testing.T) {
	ts := newTest(t)
	c, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := resp.Header.Get("X-Whoami-Name"); got != "w1" {
		t.Errorf("X-Whoami-Name: got %q, want w1", got)
	}
	for _, m := range []string{"hello", "", strings.Repeat("x", 70000)} {
		if err := c.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
			t.Fatal(err)
		}
		typ, got, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if typ != websocket.TextMessage || string(got) != m {
			t.Errorf("echo of %d bytes: got type %d, %d bytes", len(m), typ, len(got))
		}
	}
}

func TestEventsOneByOne(t *testing.T) {
	ts := newTest(t)
	resp, err := http.Get(ts.URL + "/events?count=3&interval=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	var ids []string
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			ids = append(ids, id)
		}
	}
	if strings.Join(ids, ",") != "0,1,2" {
		t.Errorf("got ids %v, want 0,1,2", ids)
	}
	for q, want := range map[string]string{
		"count=-1":               `count must be 0-10000, got "-1"`,
		"count=10001":            `count must be 0-10000, got "10001"`,
		"interval=x":             `interval must be 0-60000 (ms), got "x"`,
		"count=1&interval=60001": `interval must be 0-60000 (ms), got "60001"`,
	} {
		resp, body := get(t, ts.URL+"/events?"+q)
		if resp.StatusCode != 400 || strings.TrimSpace(body) != want {
			t.Errorf("?%s: got %d %q, want 400 %q", q, resp.StatusCode, body, want)
		}
	}
}

func TestPortFromEnvironment(t *testing.T) {
	t.Setenv("WHOAMI_PORT_NUMBER", "8089")
	o, err := parseFlags(nil, io.Discard)
	if err != nil || o.addr != ":8089" {
		t.Errorf("got %q, %v; want :8089", o.addr, err)
	}
}

func TestFlags(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantAddr string
		wantErr  bool
	}{
		{"default", nil, ":80", false},
		{"port", []string{"--port", "8081"}, ":8081", false},
		{"single dash", []string{"-port=9"}, ":9", false},
		{"addr wins", []string{"--port", "1", "--addr", "127.0.0.1:0"}, "127.0.0.1:0", false},
		{"cert without key", []string{"--cert", "x.pem"}, "", true},
		{"unknown", []string{"--nope"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFlags(tt.args, io.Discard)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && o.addr != tt.wantAddr {
				t.Errorf("addr: got %q, want %q", o.addr, tt.wantAddr)
			}
		})
	}
}
