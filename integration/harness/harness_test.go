package harness

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) { Main(m) }

func TestStartWhoami(t *testing.T) {
	w := StartWhoamiProc(t, "h1")
	r := TryGet(t, 60*time.Second, w.URL()+"/x", Host("a.test"), StatusIs(200), BodyContains("Name: h1"))
	if !strings.Contains(r.Body, "GET /x HTTP/1.1") || !strings.Contains(r.Body, "Host: a.test") {
		t.Errorf("echo: %s", r.Body)
	}
	if code := w.Stop(t); code != 0 {
		t.Errorf("whoami exit code after SIGTERM: got %d, want 0", code)
	}
	if _, err := Get(w.URL()); err == nil {
		t.Error("whoami still answers after Stop")
	}
}

func TestPoll(t *testing.T) {
	n := 0
	if err := Poll(60*time.Second, func() error {
		n++
		if n < 3 {
			return errors.New("not yet")
		}
		return nil
	}); err != nil || n != 3 {
		t.Errorf("got err %v after %d calls, want nil after 3", err, n)
	}
	calls := 0
	err := Poll(time.Hour, func() error { calls++; return Permanent(errors.New("never")) })
	if err == nil || calls != 1 {
		t.Errorf("permanent: got err %v after %d calls, want an error after 1", err, calls)
	}
	err = Poll(0, func() error { return errors.New("still no") })
	if err == nil || !strings.Contains(err.Error(), "still no") {
		t.Errorf("timeout: got %v, want the last error", err)
	}
}

func TestDeadAddrRefuses(t *testing.T) {
	if _, err := Get("http://" + DeadAddr(t)); err == nil {
		t.Error("GET to DeadAddr succeeded")
	}
}

func TestEntryPointAddrs(t *testing.T) {
	tests := []struct {
		name, static, ext string
		want              map[string]string
	}{
		{"yaml", "entryPoints:\n  web:\n    address: \":8081\"\n  websecure:\n    address: 127.0.0.2:8443/tcp\n", "yml",
			map[string]string{"web": "127.0.0.1:8081", "websecure": "127.0.0.2:8443"}},
		{"lower-case keys", "entrypoints:\n  web:\n    Address: 0.0.0.0:81\n", "yml", map[string]string{"web": "127.0.0.1:81"}},
		{"toml", "[entryPoints.web]\naddress = \":82\"\n", "toml", map[string]string{"web": "127.0.0.1:82"}},
		{"none", "log:\n  level: DEBUG\n", "yml", map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := entryPointAddrs(tt.static, tt.ext)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s: got %q, want %q", k, got[k], v)
				}
			}
		})
	}
	if _, err := entryPointAddrs("entryPoints:\n  web:\n    address: nonsense\n", "yml"); err == nil {
		t.Error("bad address: want an error")
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := WriteFile(t, dir, "a.yml", "one")
	WriteFile(t, dir, "a.yml", "two")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "two" {
		t.Errorf("got %q, want %q", b, "two")
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(tmps) != 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
}
