package harness

import (
	"strings"
	"testing"
	"time"
)

// Whoami is a running whoami backend.
type Whoami struct {
	*Process
	// Addr is the loopback address it listens on, "127.0.0.1:port".
	Addr string
}

// URL returns "http://" + Addr.
func (w *Whoami) URL() string { return "http://" + w.Addr }

// StartWhoami starts a whoami backend named name on a free loopback port
// and returns its address "127.0.0.1:port". It is stopped when the test
// ends.
func StartWhoami(t testing.TB, name string) string {
	t.Helper()
	return StartWhoamiProc(t, name).Addr
}

// StartWhoamiProc starts a whoami backend named name on a free loopback
// port (extra whoami flags in args) and returns it once it listens.
func StartWhoamiProc(t testing.TB, name string, args ...string) *Whoami {
	t.Helper()
	bin := WhoamiBin(t)
	all := append([]string{"--addr", "127.0.0.1:0", "--name", name}, args...)
	p := startProcess(t, "whoami "+name, t.TempDir(), bin, all, nil)
	const marker = "whoami: listening on "
	out := p.WaitOutput(t, 30*time.Second, marker)
	_, rest, _ := strings.Cut(out, marker)
	addr, _, _ := strings.Cut(rest, "\n")
	WaitListening(t, 10*time.Second, addr)
	return &Whoami{Process: p, Addr: addr}
}
