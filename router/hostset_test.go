package router

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// A rule of many Host alternatives (one left-deep chain of Or nodes) gets
// every host in its host set, in rule order, and deriving the set copies
// each host a bounded number of times: concatenating the left operand's
// set at every Or copied n²/2 strings (800 MB for 10 000 hosts, 25 s in a
// 20 000-host rule applied through the file provider, while every later
// configuration waited).
func TestHostsOfLongDisjunction(t *testing.T) {
	const n = 10000
	want := make([]string, n)
	parts := make([]string, n)
	for i := range parts {
		want[i] = fmt.Sprintf("h%d.example", i)
		parts[i] = fmt.Sprintf("Host(`%s`)", want[i])
	}
	parts = append(parts, "HostRegexp(`^x\\.example$`) && Host(`*.wild.example`)")
	c, err := compileRule(strings.Join(parts, " || "), "v3")
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	hs := hostsOf(c.root)
	runtime.ReadMemStats(&after)
	if hs == nil {
		t.Fatal("hostsOf = nil, want a host set")
	}
	if !slices.Equal(hs.exact, want) || !slices.Equal(hs.wild, []string{"wild.example"}) {
		t.Fatalf("host set: %d exact (first %q), wild %q; want the %d hosts in rule order and [wild.example]",
			len(hs.exact), hs.exact[:min(3, len(hs.exact))], hs.wild, n)
	}
	// The set's own slices, grown by doubling, are a few times n strings
	// of 16 bytes; the quadratic walk allocated about n²/2 of them.
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(64*16*n); got > limit {
		t.Fatalf("hostsOf allocated %d bytes for %d hosts, want at most %d (linear in the rule)", got, n, limit)
	}
	if hostsOf(mustRoot(t, strings.Join(parts[:3], " || ")+" || Path(`/x`)")) != nil {
		t.Fatal("an alternative without a host: hostsOf != nil, want nil (it may match any host)")
	}
}

func mustRoot(t *testing.T, src string) *node {
	t.Helper()
	c, err := compileRule(src, "v3")
	if err != nil {
		t.Fatal(err)
	}
	return c.root
}
