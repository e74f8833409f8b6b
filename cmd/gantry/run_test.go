package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// poll calls f every 20ms until it returns nil or 20s pass.
func poll(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The run command in process: the file provider's route is served, the
// applied configuration is stored, a restart serves it from the store
// before the provider reports (here: with the dynamic file gone), and
// cancelling the context shuts down with exit code 0.
func TestRunServesAndRestoresLastGood(t *testing.T) {
	backend := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "backend saw %s %s", r.Host, r.URL.Path)
	})}
	bl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go backend.Serve(bl)
	defer backend.Close()

	dir := t.TempDir()
	dyn := filepath.Join(dir, "dynamic")
	if err := os.Mkdir(dyn, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dyn, "app.yml"), fmt.Sprintf(
		"http:\n  routers:\n    app:\n      rule: Host(`app.test`)\n      service: app\n  services:\n    app:\n      loadBalancer:\n        servers: [{url: \"http://%s\"}]\n", bl.Addr()))
	web := freeAddr(t)
	args := []string{
		"--entrypoints.web.address=" + web,
		"--providers.file.directory=" + dyn,
		"--store.path=" + filepath.Join(dir, "gantry.db"),
		"--ping",
		"--entrypoints.traefik.address=" + freeAddr(t),
	}
	get := func() (string, error) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+web+"/hello", nil)
		req.Host = "app.test"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			return "", fmt.Errorf("status %d: %s", resp.StatusCode, b)
		}
		return string(b), nil
	}
	start := func() (cancel func() int, logs *syncBuffer) {
		ctx, stop := context.WithCancel(context.Background())
		logs = &syncBuffer{}
		code := make(chan int, 1)
		go func() { code <- realMain(ctx, args, nil, io.Discard, logs) }()
		return func() int { stop(); return <-code }, logs
	}

	stop, logs := start()
	poll(t, "route served", func() error {
		body, err := get()
		if err == nil && body != "backend saw app.test /hello" {
			err = fmt.Errorf("body %q", body)
		}
		return err
	})
	if c := stop(); c != 0 {
		t.Fatalf("exit code %d, want 0\n%s", c, logs)
	}
	if !strings.Contains(logs.String(), "config applied") {
		t.Errorf("no config applied line:\n%s", logs)
	}

	// The file disappears: the stored configuration keeps serving.
	if err := os.Remove(filepath.Join(dyn, "app.yml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(dyn); err != nil {
		t.Fatal(err)
	}
	stop, logs = start()
	defer func() {
		if c := stop(); c != 0 {
			t.Errorf("second run: exit code %d\n%s", c, logs)
		}
	}()
	poll(t, "route served from the store", func() error {
		_, err := get()
		return err
	})
	if !strings.Contains(logs.String(), "restored the last good configuration") {
		t.Errorf("no restore line:\n%s", logs)
	}
}

func TestRunBadStaticConfiguration(t *testing.T) {
	var stderr syncBuffer
	code := realMain(context.Background(), []string{"--entrypoints.web.address=nope"}, nil, io.Discard, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), `entryPoints.web.address "nope"`) {
		t.Errorf("got code %d, stderr %q", code, stderr.String())
	}
	code = realMain(context.Background(), []string{"bogus"}, nil, io.Discard, &stderr)
	if code != 2 {
		t.Errorf("bad subcommand: got code %d, want 2", code)
	}
}

// gantry healthcheck: 0 while the ping entrypoint answers, 1 once gantry
// is gone, 1 (with a reason) when ping is not enabled.
func TestHealthcheck(t *testing.T) {
	args := []string{
		"--entrypoints.web.address=" + freeAddr(t),
		"--entrypoints.traefik.address=" + freeAddr(t),
		"--ping",
		"--store.path=" + filepath.Join(t.TempDir(), "gantry.db"),
	}
	check := func() (int, string) {
		var out strings.Builder
		code := realMain(context.Background(), append([]string{"healthcheck"}, args...), nil, &out, io.Discard)
		return code, out.String()
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- realMain(ctx, args, nil, io.Discard, io.Discard) }()
	poll(t, "healthcheck passes", func() error {
		if code, out := check(); code != 0 || !strings.HasPrefix(out, "OK: http://127.0.0.1:") {
			return fmt.Errorf("code %d: %s", code, out)
		}
		return nil
	})
	stop()
	if c := <-done; c != 0 {
		t.Fatalf("run exit code %d", c)
	}
	if code, out := check(); code != 1 || !strings.Contains(out, "error:") {
		t.Errorf("after stop: code %d, %q", code, out)
	}
	var out strings.Builder
	code := realMain(context.Background(), []string{"healthcheck", "--entrypoints.web.address=:80"}, nil, &out, io.Discard)
	if code != 1 || !strings.Contains(out.String(), "ping is not enabled") {
		t.Errorf("without ping: code %d, %q", code, out.String())
	}
}

// Issue 23: "gantry --version" prints the version and exits 0, as "gantry
// version" does, without starting a proxy or writing a store in the
// working directory.
func TestVersionFlag(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
		var stdout, stderr syncBuffer
		done := make(chan int, 1)
		go func() { done <- realMain(context.Background(), args, nil, &stdout, &stderr) }()
		select {
		case code := <-done:
			if code != 0 || !strings.HasPrefix(stdout.String(), "Version:") || stderr.String() != "" {
				t.Errorf("%v: code %d, stdout %q, stderr %q; want the version, 0", args, code, stdout.String(), stderr.String())
			}
		case <-time.After(time.Minute):
			t.Fatalf("%v: still running a minute later: it started a proxy", args)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files written in the working directory: %v", entries)
	}
	var stderr syncBuffer
	if code := realMain(context.Background(), []string{"--version=1"}, nil, io.Discard, &stderr); code != 2 {
		t.Errorf("--version=1: code %d, want 2", code)
	}
}
