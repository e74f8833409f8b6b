package dnshelper

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-acme/lego/v5/challenge"
	"go.uber.org/goleak"
)

// helperEnv makes this test binary the helper: TestMain then serves
// testRegistry instead of running the tests.
const helperEnv = "GANTRY_DNSHELPER_TEST_HELPER"

// memo keeps what Present created in memory, as most lego providers keep
// the record IDs CleanUp needs: CleanUp of a record this process did not
// create fails. Present of "fail.example" fails; it prints to stdout, as
// lego's exec provider logs there by default.
type memo struct {
	mu      sync.Mutex
	records map[string]bool
}

func (m *memo) Present(_ context.Context, domain, token, keyAuth string) error {
	fmt.Println("memo: presenting", domain) // must not reach the protocol
	if domain == "fail.example" {
		return errors.New("memo: refused\nfail.example")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records[domain+" "+token+" "+keyAuth] = true
	return nil
}

func (m *memo) CleanUp(_ context.Context, domain, token, keyAuth string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := domain + " " + token + " " + keyAuth
	if !m.records[k] {
		return fmt.Errorf("memo: unknown record for %s", domain)
	}
	delete(m.records, k)
	return nil
}

func (m *memo) Timeout() (timeout, interval time.Duration) { return 3 * time.Minute, 7 * time.Second }

// seq is memo solving one domain at a time.
type seq struct{ memo }

func (*seq) Sequential() time.Duration { return 11 * time.Second }

// crash exits in Present, as a helper that crashes.
type crash struct{ memo }

func (*crash) Present(context.Context, string, string, string) error { os.Exit(9); return nil }

var testRegistry = Registry{
	Lookup: func(name string) (func() (challenge.Provider, error), bool) {
		switch strings.ToLower(name) {
		case "memo":
			return func() (challenge.Provider, error) { return &memo{records: map[string]bool{}}, nil }, true
		case "seq":
			return func() (challenge.Provider, error) { return &seq{memo{records: map[string]bool{}}}, nil }, true
		case "crash":
			return func() (challenge.Provider, error) { return &crash{}, nil }, true
		case "badenv":
			return func() (challenge.Provider, error) {
				return nil, errors.New("badenv: some credentials information are missing: BADENV_TOKEN")
			}, true
		}
		return nil, false
	},
	Names: func() []string { return []string{"badenv", "crash", "memo", "seq"} },
}

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(Run(testRegistry))
	}
	os.Setenv(helperEnv, "1") // for the helpers the tests start
	goleak.VerifyTestMain(m)
}

func self(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// One helper process serves the Present and CleanUp of an order (the
// provider's in-memory record IDs survive between them), concurrent calls
// included, and exits once every presented record is cleaned up.
func TestOneProcessPerOrder(t *testing.T) {
	p, err := New(t.Context(), self(t), "memo", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := p.(*Client)
	if to, iv := p.Timeout(); to != 3*time.Minute || iv != 7*time.Second {
		t.Errorf("Timeout() = %v, %v; want the provider's 3m, 7s", to, iv)
	}
	if _, ok := p.(interface{ Sequential() time.Duration }); ok {
		t.Error("a parallel provider's client has Sequential")
	}
	domains := []string{"a.example", "b.example", "c.example", "d.example"}
	var wg sync.WaitGroup
	for _, d := range domains {
		wg.Go(func() {
			if err := p.Present(t.Context(), d, "tok-"+d, "ka-"+d); err != nil {
				t.Errorf("Present(%s): %v", d, err)
			}
		})
	}
	wg.Wait()
	c.mu.Lock()
	running := c.sess != nil
	c.mu.Unlock()
	if !running {
		t.Fatal("no helper runs between Present and CleanUp")
	}
	for _, d := range domains {
		wg.Go(func() {
			if err := p.CleanUp(t.Context(), d, "tok-"+d, "ka-"+d); err != nil {
				t.Errorf("CleanUp(%s): %v", d, err)
			}
		})
	}
	wg.Wait()
	c.mu.Lock()
	running = c.sess != nil
	c.mu.Unlock()
	if running {
		t.Error("the helper still runs after every record was cleaned up")
	}
	// A new process knows nothing of the old one's records.
	if err := p.CleanUp(t.Context(), "a.example", "tok-a.example", "ka-a.example"); err == nil || err.Error() != "memo: unknown record for a.example" {
		t.Errorf("CleanUp in a new helper: %v, want the provider's own error", err)
	}
}

// Errors come back as the provider's message (on one line); a sequential
// provider's client is sequential with its interval.
func TestProviderErrors(t *testing.T) {
	p, err := New(t.Context(), self(t), "SEQ", []string{"127.0.0.1:53"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.(interface{ Close() error }).Close()
	if s, ok := p.(interface{ Sequential() time.Duration }); !ok || s.Sequential() != 11*time.Second {
		t.Errorf("sequential provider: Sequential missing or wrong (%v)", ok)
	}
	if err := p.Present(t.Context(), "fail.example", "t", "k"); err == nil || err.Error() != "memo: refused fail.example" {
		t.Errorf("Present(fail.example): %v, want the provider's error", err)
	}
	if err := p.Present(t.Context(), "ok.example", "t", "k"); err != nil {
		t.Errorf("Present after an error: %v", err)
	}

	_, err = New(t.Context(), self(t), "acmeville", nil, nil)
	if want := `unknown DNS provider "acmeville" (available in this build: badenv, crash, memo, seq)`; !errors.Is(err, ErrUnknownProvider) || err.Error() != want {
		t.Errorf("unknown provider: %v, want %q", err, want)
	}
	_, err = New(t.Context(), self(t), "badenv", nil, nil)
	if want := "badenv: some credentials information are missing: BADENV_TOKEN"; err == nil || err.Error() != want {
		t.Errorf("failing constructor: %v, want %q", err, want)
	}
	_, err = New(t.Context(), filepath.Join(t.TempDir(), "gantry-dns"), "memo", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing helper: %v", err)
	}
}

// A helper that dies fails the calls waiting on it with its exit; the
// next call starts a new one.
func TestHelperCrash(t *testing.T) {
	p, err := New(t.Context(), self(t), "crash", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := p.Present(t.Context(), "a.example", "t", "k"); err == nil || !strings.Contains(err.Error(), "exited before answering present a.example") || !strings.Contains(err.Error(), "exit status 9") {
			t.Errorf("Present in a crashing helper: %v, want the exit status", err)
		}
	}
}

// The helper side refuses bad command lines and bad requests, and lists
// its providers.
func TestMainCommandLine(t *testing.T) {
	run := func(stdin string, args ...string) (int, string, string) {
		var out, errb strings.Builder
		code := Main(t.Context(), args, strings.NewReader(stdin), &out, &errb, testRegistry)
		return code, out.String(), errb.String()
	}
	if code, out, _ := run("", "names"); code != ExitOK || out != "badenv\ncrash\nmemo\nseq\n" {
		t.Errorf("names: %d %q", code, out)
	}
	for _, args := range [][]string{nil, {"memo"}, {"memo", "present"}, {"-bogus", "memo", "check"}} {
		if code, _, _ := run("", args...); code != ExitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, ExitUsage)
		}
	}
	if code, out, _ := run("", "memo", "check"); code != ExitOK || out != `{"protocol":1,"timeout":180000000000,"interval":7000000000}`+"\n" {
		t.Errorf("check: %d %q", code, out)
	}
	for stdin, want := range map[string]string{
		"{\"id\":1,\"op\":\"delete\",\"domain\":\"a\",\"token\":\"t\",\"keyAuth\":\"k\"}\n": `unknown op "delete"`,
		"{\"id\":1,\"op\":\"present\",\"domain\":\"a\"}\n":                                  "domain, token and keyAuth are required",
		"not json\n": "request: invalid character",
		`{"id":1,"op":"present","domain":"` + strings.Repeat("a", MaxLine) + "\"}\n": "request longer than 65536 bytes",
	} {
		if code, _, errs := run(stdin, "memo", "serve"); code != ExitFailed || !strings.Contains(errs, want) {
			t.Errorf("serve %.40q: exit %d, stderr %q; want %d and %q", stdin, code, errs, ExitFailed, want)
		}
	}
	code, out, _ := run("{\"id\":4,\"op\":\"present\",\"domain\":\"a\",\"token\":\"t\",\"keyAuth\":\"k\"}\n{\"id\":5,\"op\":\"cleanup\",\"domain\":\"b\",\"token\":\"t\",\"keyAuth\":\"k\"}\n", "memo", "serve")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	slices.Sort(lines[1:])
	if code != ExitOK || len(lines) != 3 || lines[1] != `{"id":4,"error":""}` || lines[2] != `{"id":5,"error":"memo: unknown record for b"}` {
		t.Errorf("serve: exit %d, output %q", code, out)
	}
}

// Lines longer than the limit are cut; the reader goes on with the next.
func TestLineReader(t *testing.T) {
	lr := lineReader{r: strings.NewReader(strings.Repeat("x", 10000) + "\nshort\r\nlast"), max: 5000}
	var got []int
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		got = append(got, len(line))
	}
	if !slices.Equal(got, []int{5000, 5, 4}) {
		t.Errorf("line lengths %v, want [5000 5 4]", got)
	}
}
