package handoff

import (
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnvNotAnUpgrade(t *testing.T) {
	in, err := FromEnv(envOf(nil))
	if err != nil || in != nil {
		t.Fatalf("FromEnv without the variables = %v, %v; want nil, nil", in, err)
	}
	// A nil Inherited holds nothing and its methods are no-ops.
	if ls, err := in.Listeners("tcp/web"); ls != nil || err != nil {
		t.Fatalf("nil Listeners = %v, %v", ls, err)
	}
	if err := in.Ready(); err != nil || in.Unused() != nil {
		t.Fatal("nil Ready/Unused")
	}
}

func TestFromEnvErrors(t *testing.T) {
	for _, spec := range []string{"tcp/web", "=3", "tcp/web=x", "tcp/web=2", "tcp/web=3,", "tcp/web=" + strings.Repeat("3,", maxFDs) + "3"} {
		if _, err := FromEnv(envOf(map[string]string{EnvFDs: spec})); err == nil || !strings.Contains(err.Error(), EnvFDs) {
			t.Errorf("FromEnv(%q) error = %v, want one naming %s", spec, err, EnvFDs)
		}
	}
	if _, err := FromEnv(envOf(map[string]string{EnvReady: "1"})); err == nil || !strings.Contains(err.Error(), EnvReady) {
		t.Errorf("ready fd 1: error = %v", err)
	}
}

// A listener passed as a descriptor is the same socket: a connection made
// to the original address is accepted on the inherited listener.
func TestListenersAreTheSameSocket(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := l.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil { // the old process closes its copy
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	// FromEnv owns the descriptors it names: dups of pw.
	gone, _ := syscall.Dup(int(pw.Fd()))
	ready, _ := syscall.Dup(int(pw.Fd()))
	pw.Close()
	in, err := FromEnv(envOf(map[string]string{EnvFDs: "tcp/web=" + strconv.Itoa(int(f.Fd())) + ";tcp/gone=" + strconv.Itoa(gone), EnvReady: strconv.Itoa(ready)}))
	if err != nil {
		t.Fatal(err)
	}
	ls, err := in.Listeners("tcp/web")
	if err != nil || len(ls) != 1 {
		t.Fatalf("Listeners = %v, %v", ls, err)
	}
	defer ls[0].Close()
	if again, _ := in.Listeners("tcp/web"); again != nil {
		t.Fatal("a second Listeners call returned the sockets again")
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial the inherited socket's address: %v", err)
	}
	defer c.Close()
	s, err := ls[0].Accept()
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got := in.Unused(); len(got) != 1 || got[0] != "tcp/gone" {
		t.Fatalf("Unused = %v, want [tcp/gone]", got)
	}
	if err := in.Ready(); err != nil {
		t.Fatal(err)
	}
	// One byte, then EOF: every write end (gone, ready) is closed.
	b, err := io.ReadAll(pr)
	if err != nil || string(b) != "\x01" {
		t.Fatalf("readiness pipe read %q, %v; want one byte then EOF", b, err)
	}
}
