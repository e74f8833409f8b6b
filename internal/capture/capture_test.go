package capture

import (
	"bytes"
	"fmt"
	"os/exec"
	"sync"
	"testing"
)

func write(t *testing.T, b *Buffer, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if n, err := b.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v; want %d, nil", p, n, err, len(p))
		}
	}
}

// TestKeptBytes: Head(5) keeps the first 5 bytes written, Tail(5) the last
// 5, whatever the writes' sizes.
func TestKeptBytes(t *testing.T) {
	for _, tt := range []struct {
		parts      []string
		head, tail string
	}{
		{nil, "", ""},
		{[]string{"abc"}, "abc", "abc"},
		{[]string{"abcd", "ef"}, "abcde", "bcdef"},
		{[]string{"abcdefgh"}, "abcde", "defgh"},
		{[]string{"ab", "cdefgh", "ij"}, "abcde", "fghij"},
		{[]string{"abcde", "", "f"}, "abcde", "bcdef"},
	} {
		head, tail := Head(5), Tail(5)
		write(t, head, tt.parts...)
		write(t, tail, tt.parts...)
		if got := head.String(); got != tt.head {
			t.Errorf("Head(5) after %q: %q, want %q", tt.parts, got, tt.head)
		}
		if got := string(tail.Bytes()); got != tt.tail {
			t.Errorf("Tail(5) after %q: %q, want %q", tt.parts, got, tt.tail)
		}
	}
}

func TestZeroMaxKeepsNothing(t *testing.T) {
	for _, b := range []*Buffer{Head(0), Tail(0), {}} {
		write(t, b, "abc")
		if got := b.String(); got != "" {
			t.Errorf("%+v kept %q", b, got)
		}
	}
}

// TestBytesIsACopy: what Bytes returned does not change with later writes.
func TestBytesIsACopy(t *testing.T) {
	b := Tail(3)
	write(t, b, "abc")
	got := b.Bytes()
	write(t, b, "de")
	if string(got) != "abc" {
		t.Fatalf("Bytes changed to %q after a write", got)
	}
}

// TestChildProcessOutput: a child writing more than max through os/exec
// (its copying goroutine) runs to the end, while String is read
// concurrently; the head and the tail are what it wrote first and last.
func TestChildProcessOutput(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("sh: %v", err)
	}
	head, tail := Head(16), Tail(16)
	cmd := exec.Command(sh, "-c", `i=0; while [ $i -lt 2000 ]; do echo "line $i" >&2; echo "out $i"; i=$((i+1)); done`)
	cmd.Stderr, cmd.Stdout = tail, head
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 100 {
			_ = tail.String()
			_ = head.Bytes()
		}
	})
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	wg.Wait()
	if got, want := tail.String(), " 1998\nline 1999\n"; got != want {
		t.Errorf("tail %q, want %q", got, want)
	}
	if got, want := head.String(), "out 0\nout 1\nout "; got != want {
		t.Errorf("head %q, want %q", got, want)
	}
}

func TestConcurrentWrites(t *testing.T) {
	b := Tail(64)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 200 {
				fmt.Fprintf(b, "%d", i)
			}
		})
	}
	wg.Wait()
	if got := b.Bytes(); len(got) != 64 || bytes.ContainsFunc(got, func(r rune) bool { return r < '0' || r > '7' }) {
		t.Fatalf("after concurrent writes: %q", got)
	}
}
