package balance

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
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

func testTargets(weights ...int) []*Server {
	var ts []*Server
	for i, w := range weights {
		u, _ := url.Parse(fmt.Sprintf("http://10.0.0.%d:80", i+1))
		ts = append(ts, &Server{URL: u, Weight: w, Backend: &Backend{URL: u, key: u.String()}})
	}
	return ts
}

func pickCounts(t *testing.T, p Picker, ts []*Server, n int, r *http.Request) []int {
	t.Helper()
	c := make([]int, len(ts))
	for range n {
		got, err := p.Pick(r)
		if err != nil {
			t.Fatalf("pick: %v", err)
		}
		c[got]++
	}
	return c
}

// Case 032 notes: weights 3:1 over 400 picks are exactly 300/100 with
// smooth WRR; a down server's share goes to the others in their ratio;
// all down is ErrNoBackend.
func TestWRRPicker(t *testing.T) {
	ts := testTargets(3, 1)
	p := NewWRR(ts)
	if got := pickCounts(t, p, ts, 400, nil); !slices.Equal(got, []int{300, 100}) {
		t.Errorf("3:1 over 400: got %v", got)
	}
	ts = testTargets(3, 2, 1)
	p = NewWRR(ts)
	ts[1].Passive = &Passive{}
	ts[1].Backend.downUntil.Store(1 << 62)
	if got := pickCounts(t, p, ts, 400, nil); !slices.Equal(got, []int{300, 0, 100}) {
		t.Errorf("3:2:1 with the middle down: got %v, want 300/0/100", got)
	}
	for _, x := range ts {
		x.Passive = &Passive{}
		x.Backend.downUntil.Store(1 << 62)
	}
	if _, err := p.Pick(nil); err != ErrNoBackend {
		t.Errorf("all down: got %v, want ErrNoBackend", err)
	}
}

func TestP2CPrefersFewerInFlight(t *testing.T) {
	ts := testTargets(1, 1)
	ts[0].Backend.inflight.Store(10)
	p := NewP2C(ts)
	if got := pickCounts(t, p, ts, 100, nil); got[1] != 100 {
		t.Errorf("got %v, want every pick on the idle server", got)
	}
}

func TestHRWIsStickyPerClient(t *testing.T) {
	ts := testTargets(1, 1, 1)
	p := NewHRW(ts)
	seen := map[int]bool{}
	for i := range 50 {
		r := &http.Request{RemoteAddr: fmt.Sprintf("192.0.2.%d:1234", i)}
		first, _ := p.Pick(r)
		again, _ := p.Pick(&http.Request{RemoteAddr: fmt.Sprintf("192.0.2.%d:999", i)})
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
	p := NewWRR(testTargets(5, 3, 1))
	if n := testing.AllocsPerRun(100, func() { _, _ = p.Pick(nil) }); n != 0 {
		t.Errorf("pick allocates %v times, want 0", n)
	}
}

// BenchmarkPick is one smooth-WRR pick over 8 weighted servers from
// parallel goroutines: one atomic add, no lock, no allocation.
func BenchmarkPick(b *testing.B) {
	p := NewWRR(testTargets(5, 3, 1, 1, 2, 2, 4, 1))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := p.Pick(nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Passive health: maxFailedAttempts failures within failureWindow take a
// backend out for the window (defaults 10s and 1); Failed reports the
// transition once and wakes Changed; a success after the window clears it.
func TestPassiveFailures(t *testing.T) {
	p := NewPool(slog.New(slog.DiscardHandler))
	defer p.Close()
	u, _ := url.Parse("http://a:80")
	b := p.AcquireBackend(u, "s@file")
	if d := NewPassive(&config.PassiveServerHealthCheck{}); d.window != 10*time.Second || d.maxFailures != 1 {
		t.Errorf("defaults %+v", d)
	}
	pp := NewPassive(&config.PassiveServerHealthCheck{FailureWindow: config.Duration(time.Hour), MaxFailedAttempts: 2})
	srv := &Server{URL: u, Backend: b, Weight: 1, Passive: pp}
	changed := p.Changed()
	if p.Failed(b, pp, errors.New("refused")) || !srv.Available() {
		t.Fatal("one failure of two took the server out")
	}
	if !p.Failed(b, pp, errors.New("refused")) || srv.Available() {
		t.Fatal("the second failure did not take the server out")
	}
	select {
	case <-changed:
	default:
		t.Error("Changed did not fire")
	}
	if st := p.Status(); len(st) != 1 || st[0].Up || st[0].LastError != "refused" || st[0].Services[0] != "s@file" {
		t.Errorf("status %+v", st)
	}
	b.downUntil.Store(time.Now().Add(-time.Second).UnixNano()) // the window has passed
	b.Succeeded()
	if b.downUntil.Load() != 0 || !srv.Available() {
		t.Error("a success after the window did not clear the verdict")
	}
	p.ReleaseBackend(b, "s@file")
	if len(p.Status()) != 0 {
		t.Error("released backend still listed")
	}
}

// HRW with weights 3:1 gives the heavier server about three quarters of
// the clients (rendezvous hashing scales each score by its weight): over
// 2 000 client addresses, the 3-weight server must get clearly more than
// half. An HRW that ignored weights gives each about 1 000.
func TestHRWHonoursWeights(t *testing.T) {
	ts := testTargets(3, 1)
	p := NewHRW(ts)
	var n [2]int
	for i := range 2000 {
		r := &http.Request{RemoteAddr: fmt.Sprintf("198.51.%d.%d:1234", i/250, i%250)}
		got, err := p.Pick(r)
		if err != nil {
			t.Fatal(err)
		}
		n[got]++
	}
	// Expected 1 500 / 500; a fair coin stays within 1 000 ± 100 with
	// overwhelming probability, so 1 300 separates the two.
	if n[0] < 1300 || n[1] == 0 {
		t.Errorf("weights 3:1 over 2000 clients gave %v, want about 1500/500", n)
	}
}
