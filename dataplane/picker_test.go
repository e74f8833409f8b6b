package dataplane

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
)

func TestSmoothSequence(t *testing.T) {
	tests := []struct {
		weights []int
		want    []int32
	}{
		{[]int{3, 1}, []int32{0, 0, 1, 0}},
		{[]int{5, 1, 1}, []int32{0, 0, 1, 0, 2, 0, 0}}, // nginx's example: a a b a c a a
		{[]int{6, 2}, []int32{0, 0, 1, 0}},             // divided by the gcd
		{[]int{1, 0, 1}, []int32{0, 2}},                // weight 0 never appears
		{[]int{0, 0}, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.weights), func(t *testing.T) {
			if got := smoothSequence(tt.weights); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	if got := smoothSequence([]int{100000, 1}); len(got) > maxSequence+1 || !slices.Contains(got, 1) {
		t.Errorf("huge weights: sequence of %d, contains the small server: %v", len(got), slices.Contains(got, 1))
	}
}

func testTargets(weights ...int) []*target {
	var ts []*target
	for i, w := range weights {
		u, _ := url.Parse(fmt.Sprintf("http://10.0.0.%d:80", i+1))
		ts = append(ts, &target{url: u, weight: w, backend: &backend{URL: u, key: u.String()}})
	}
	return ts
}

func pickCounts(t *testing.T, p picker, ts []*target, n int, r *http.Request) []int {
	t.Helper()
	c := make([]int, len(ts))
	for range n {
		got, err := p.pick(r)
		if err != nil {
			t.Fatalf("pick: %v", err)
		}
		c[slices.Index(ts, got)]++
	}
	return c
}

// Case 032 notes: weights 3:1 over 400 picks are exactly 300/100 with
// smooth WRR; a down server's share goes to the others in their ratio;
// all down is ErrNoBackend.
func TestWRRPicker(t *testing.T) {
	ts := testTargets(3, 1)
	p := newWRR(ts)
	if got := pickCounts(t, p, ts, 400, nil); !slices.Equal(got, []int{300, 100}) {
		t.Errorf("3:1 over 400: got %v", got)
	}
	ts = testTargets(3, 2, 1)
	p = newWRR(ts)
	ts[1].passive = &passivePolicy{}
	ts[1].backend.downUntil.Store(1 << 62)
	if got := pickCounts(t, p, ts, 400, nil); !slices.Equal(got, []int{300, 0, 100}) {
		t.Errorf("3:2:1 with the middle down: got %v, want 300/0/100", got)
	}
	for _, x := range ts {
		x.passive = &passivePolicy{}
		x.backend.downUntil.Store(1 << 62)
	}
	if _, err := p.pick(nil); err != ErrNoBackend {
		t.Errorf("all down: got %v, want ErrNoBackend", err)
	}
}

func TestP2CPrefersFewerInFlight(t *testing.T) {
	ts := testTargets(1, 1)
	ts[0].backend.inflight.Store(10)
	p := &p2cPicker{targets: ts}
	if got := pickCounts(t, p, ts, 100, nil); got[1] != 100 {
		t.Errorf("got %v, want every pick on the idle server", got)
	}
}

func TestHRWIsStickyPerClient(t *testing.T) {
	ts := testTargets(1, 1, 1)
	p := newHRW(ts)
	seen := map[*target]bool{}
	for i := range 50 {
		r := &http.Request{RemoteAddr: fmt.Sprintf("192.0.2.%d:1234", i)}
		first, _ := p.pick(r)
		again, _ := p.pick(&http.Request{RemoteAddr: fmt.Sprintf("192.0.2.%d:999", i)})
		if first != again {
			t.Fatalf("client %d moved between servers", i)
		}
		seen[first] = true
	}
	if len(seen) != 3 {
		t.Errorf("50 clients used %d of 3 servers", len(seen))
	}
}

func TestPickDoesNotAllocate(t *testing.T) {
	p := newWRR(testTargets(5, 3, 1))
	if n := testing.AllocsPerRun(100, func() { _, _ = p.pick(nil) }); n != 0 {
		t.Errorf("pick allocates %v times, want 0", n)
	}
}
