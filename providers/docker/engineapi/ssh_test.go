package engineapi

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeSSHEnv names the engine socket the test binary, started as "ssh",
// connects its standard input and output to (the remote `docker system
// dial-stdio`); it writes its arguments to the file in fakeSSHArgsEnv.
const (
	fakeSSHEnv     = "ENGINEAPI_FAKE_SSH_SOCKET"
	fakeSSHArgsEnv = "ENGINEAPI_FAKE_SSH_ARGS"
)

func fakeSSH(sock string) int {
	if f := os.Getenv(fakeSSHArgsEnv); f != "" {
		_ = os.WriteFile(f, []byte(strings.Join(os.Args[1:], "\n")), 0o600)
	}
	if os.Getenv("ENGINEAPI_FAKE_SSH_FAIL") != "" {
		os.Stderr.WriteString("ssh: connect to host nowhere port 22: Connection refused\n")
		return 255
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 255
	}
	done := make(chan struct{})
	go func() { _, _ = io.Copy(os.Stdout, c); close(done) }()
	_, _ = io.Copy(c, os.Stdin)
	c.(*net.UnixConn).CloseWrite()
	<-done
	return 0
}

// useFakeSSH puts an "ssh" on PATH that is this test binary bridging to
// e's socket, and returns the file its arguments are written to.
func useFakeSSH(t *testing.T, e *engine) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ssh"), []byte("#!/bin/sh\nexec "+exe+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv(fakeSSHEnv, strings.TrimPrefix(e.endpoint, "unix://"))
	args := filepath.Join(dir, "args")
	t.Setenv(fakeSSHArgsEnv, args)
	return args
}

// TestSSHEndpoint: an ssh:// endpoint reaches the engine through ssh(1)
// running `docker system dial-stdio` with the user, port and socket path
// of the endpoint, as Docker's CLI and Traefik do.
func TestSSHEndpoint(t *testing.T) {
	e := newEngine(t, "1.45", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, []map[string]any{{"Id": "abc", "Names": []string{"/web"}, "State": "running"}})
	})
	argsFile := useFakeSSH(t, e)
	c := newClient(t, Options{Endpoint: "ssh://deploy@docker.example:2222/run/user/1000/docker.sock"})
	list, err := c.ContainerList(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != "abc" {
		t.Fatalf("list = %+v", list)
	}
	b, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-o", "ConnectTimeout=30", "-T", "-l", "deploy", "-p", "2222", "--", "docker.example",
		"docker", "--host=unix:///run/user/1000/docker.sock", "system", "dial-stdio"}
	if got := strings.Split(string(b), "\n"); !slices.Equal(got, want) {
		t.Errorf("ssh arguments\n got %q\nwant %q", got, want)
	}
	if p := e.paths(); !slices.Contains(p, "/v1.45/containers/json?all=1") {
		t.Errorf("engine saw %q, want the list under the negotiated version", p)
	}
}

// TestSSHFailureSaysWhy: when ssh fails, the error carries what ssh said.
func TestSSHFailureSaysWhy(t *testing.T) {
	e := newEngine(t, "1.45", nil)
	useFakeSSH(t, e)
	t.Setenv("ENGINEAPI_FAKE_SSH_FAIL", "1")
	c := newClient(t, Options{Endpoint: "ssh://docker.example"})
	_, err := c.Ping(context.Background())
	if err == nil || !strings.Contains(err.Error(), "Connection refused") || !strings.Contains(err.Error(), "ssh://docker.example") {
		t.Fatalf("error %v, want ssh's message and the endpoint", err)
	}
}

func TestSSHEndpointRefused(t *testing.T) {
	for _, ep := range []string{"ssh://", "ssh://u:secret@host", "ssh://-oProxyCommand=x", "ssh://-l@host", "ssh://host?x=1"} {
		if _, err := ParseEndpoint(ep); err == nil {
			t.Errorf("%q: no error", ep)
		}
	}
	u, err := ParseEndpoint("ssh://host")
	if err != nil {
		t.Fatal(err)
	}
	if got := sshArgs(u); !slices.Equal(got, []string{"-o", "ConnectTimeout=30", "-T", "--", "host", "docker", "system", "dial-stdio"}) {
		t.Errorf("args %q", got)
	}
}
