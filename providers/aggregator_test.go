package providers_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/providertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// routers returns a snapshot with one router per name.
func routers(names ...string) providers.Snapshot {
	c := config.New()
	for _, n := range names {
		c.HTTP.Routers[n] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Host(`" + n + "`)", Service: "s"}}
	}
	return providers.Snapshot{Config: c}
}

// harness runs an Aggregator inside a synctest bubble and records applies.
type harness struct {
	t       *testing.T
	agg     *providers.Aggregator
	mu      sync.Mutex
	applied []*providers.Merged
	cancel  context.CancelFunc
	done    chan error
}

func start(t *testing.T, debounce time.Duration, ps ...providers.Provider) *harness {
	h := &harness{t: t, agg: providers.NewAggregator(discard, debounce, ps...), done: make(chan error, 1)}
	return h
}

func (h *harness) run() {
	ctx, cancel := context.WithCancel(h.t.Context())
	h.cancel = cancel
	go func() {
		h.done <- h.agg.Run(ctx, func(_ context.Context, m *providers.Merged) {
			h.mu.Lock()
			h.applied = append(h.applied, m)
			h.mu.Unlock()
		})
	}()
	synctest.Wait()
}

func (h *harness) stop() {
	h.cancel()
	if err := <-h.done; err != nil {
		h.t.Errorf("Run returned %v, want nil", err)
	}
}

// names returns the sorted router names of the i-th applied configuration.
func (h *harness) names(i int) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var n []string
	for k := range h.applied[i].Config.HTTP.Routers {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

func (h *harness) merged(i int) *providers.Merged {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.applied[i]
}

func (h *harness) wantApplies(n int) {
	h.t.Helper()
	synctest.Wait()
	h.mu.Lock()
	got := len(h.applied)
	h.mu.Unlock()
	if got != n {
		h.t.Fatalf("got %d applies, want %d", got, n)
	}
}

func TestDebounceCoalescesAndLatestWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := providertest.New("file")
		h := start(t, 100*time.Millisecond, p)
		h.run()
		defer h.stop()

		p.Publish(routers("a"))
		time.Sleep(60 * time.Millisecond)
		p.Publish(routers("b"))
		time.Sleep(60 * time.Millisecond)
		p.Publish(routers("c"))
		time.Sleep(99 * time.Millisecond) // 99ms after the last publish: still quiet-waiting
		h.wantApplies(0)
		time.Sleep(1 * time.Millisecond)
		h.wantApplies(1)
		if got, want := h.names(0), []string{"c@file"}; !slices.Equal(got, want) {
			t.Errorf("applied routers %v, want %v (latest wins)", got, want)
		}
		if got := h.merged(0).Sources["file"].State; got != providers.StateOK {
			t.Errorf("source state %q, want ok", got)
		}
	})
}

func TestDebounceHasAnUpperBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := providertest.New("file")
		h := start(t, 100*time.Millisecond, p)
		h.run()
		defer h.stop()
		// A publish every 50ms never leaves a quiet window; the merge still
		// happens 10 windows (1s) after the first publish.
		for i := range 19 {
			p.Publish(routers(string(rune('a' + i))))
			time.Sleep(50 * time.Millisecond)
		}
		h.wantApplies(0)
		p.Publish(routers("last"))
		time.Sleep(50 * time.Millisecond)
		h.wantApplies(1)
		if got := h.names(0); !slices.Equal(got, []string{"last@file"}) {
			t.Errorf("applied %v, want [last@file]", got)
		}
	})
}

func TestNoDoubleApply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := providertest.New("file")
		h := start(t, 100*time.Millisecond, p)
		h.run()
		defer h.stop()

		p.Publish(routers("a"))
		time.Sleep(100 * time.Millisecond)
		h.wantApplies(1)
		// The same content again, as a fresh snapshot: no apply.
		p.Publish(routers("a"))
		time.Sleep(time.Second)
		h.wantApplies(1)
		// A change that is reverted within the window: nothing new to apply.
		p.Publish(routers("b"))
		time.Sleep(10 * time.Millisecond)
		p.Publish(routers("a"))
		time.Sleep(time.Second)
		h.wantApplies(1)
		// A publish made during the window is part of the merge; the signal it
		// left must not produce a second merge.
		p.Publish(routers("c"))
		time.Sleep(99 * time.Millisecond)
		p.Publish(routers("d"))
		time.Sleep(time.Second)
		h.wantApplies(2)
		if got := h.names(1); !slices.Equal(got, []string{"d@file"}) {
			t.Errorf("applied %v, want [d@file]", got)
		}
	})
}

// A change in problems alone (a container that is now pending, case 014)
// is a new version: it must reach apply, so the API shows it.
func TestProblemOnlyChangeIsApplied(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := providertest.New("docker")
		h := start(t, 100*time.Millisecond, p)
		h.run()
		defer h.stop()
		p.Publish(routers("a"))
		time.Sleep(time.Second)
		h.wantApplies(1)
		pending := routers("a")
		pending.Problems = []providers.Problem{{Provider: "docker", Source: "container web-2", Message: "health: starting", Severity: providers.SeverityPending}}
		p.Publish(pending)
		time.Sleep(time.Second)
		h.wantApplies(2)
		if got := h.merged(1).Problems; len(got) != 1 || got[0].Source != "container web-2" {
			t.Fatalf("applied problems %v, want the pending container", got)
		}
		if h.merged(0).Version == h.merged(1).Version {
			t.Fatal("a problem-only change kept the same version")
		}
		p.Publish(pending) // the same problems again: nothing new
		time.Sleep(time.Second)
		h.wantApplies(2)
	})
}

func TestTwoProvidersMerge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, d := providertest.New("file"), providertest.New("docker")
		h := start(t, 100*time.Millisecond, f, d)
		h.run()
		defer h.stop()
		f.Publish(routers("a"))
		d.Publish(routers("a", "b"))
		time.Sleep(100 * time.Millisecond)
		h.wantApplies(1)
		if got, want := h.names(0), []string{"a@docker", "a@file", "b@docker"}; !slices.Equal(got, want) {
			t.Errorf("applied %v, want %v", got, want)
		}
		d.Publish(routers())
		time.Sleep(100 * time.Millisecond)
		h.wantApplies(2)
		if got, want := h.names(1), []string{"a@file"}; !slices.Equal(got, want) {
			t.Errorf("applied %v, want %v", got, want)
		}
	})
}

func TestFailingProviderBacksOffAndKeepsSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, other := providertest.New("docker"), providertest.New("file")
		h := start(t, 10*time.Millisecond, p, other)
		h.run()
		defer h.stop()
		p.Publish(routers("web"))
		time.Sleep(10 * time.Millisecond)
		h.wantApplies(1)

		// Each failure restarts Run after MinBackoff, doubling: 100, 200, 400ms.
		var restarts []time.Duration
		for range 3 {
			if !p.Fail(errors.New("socket gone")) {
				t.Fatal("Fail: no active Run")
			}
			synctest.Wait()
			failedAt := time.Now()
			for !p.Running() {
				time.Sleep(time.Millisecond)
				synctest.Wait()
			}
			restarts = append(restarts, time.Since(failedAt))
		}
		if want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}; !slices.Equal(restarts, want) {
			t.Errorf("restart delays %v, want %v", restarts, want)
		}
		if p.Runs() != 4 {
			t.Errorf("got %d runs, want 4", p.Runs())
		}
		st := h.agg.Sources()["docker"]
		if st.Restarts != 3 || st.LastError != "socket gone" {
			t.Errorf("source state %+v, want 3 restarts and last error", st)
		}
		// The restarted Run re-published the same snapshot: nothing re-applied,
		// and the other provider's change merges with docker's snapshot.
		other.Publish(routers("x"))
		time.Sleep(10 * time.Millisecond)
		h.wantApplies(2)
		if got, want := h.names(1), []string{"web@docker", "x@file"}; !slices.Equal(got, want) {
			t.Errorf("applied %v, want %v", got, want)
		}
	})
}

func TestPanickingProviderIsRecovered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := providertest.New("consul")
		h := start(t, 10*time.Millisecond, p)
		h.run()
		defer h.stop()
		p.Publish(routers("api"))
		time.Sleep(10 * time.Millisecond)
		h.wantApplies(1)
		p.Panic("boom")
		synctest.Wait()
		st := h.agg.Sources()["consul"]
		if st.State != providers.StateError || st.Restarts != 1 {
			t.Errorf("state %+v, want error with 1 restart", st)
		}
		if len(st.LastError) < 12 || st.LastError[:12] != "panic: boom\n" {
			t.Errorf("last error %q, want it to start with the panic value", st.LastError)
		}
		time.Sleep(providers.MinBackoff)
		synctest.Wait()
		if !p.Running() {
			t.Errorf("provider not restarted after %v", providers.MinBackoff)
		}
		if st := h.agg.Sources()["consul"]; st.State != providers.StateOK {
			t.Errorf("state after restart %q, want ok", st.State)
		}
	})
}

func TestEarlyNilReturnIsRestarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var runs atomic.Int32
		p := providerFunc{name: "x", run: func(ctx context.Context, publish func(providers.Snapshot)) error {
			runs.Add(1)
			return nil
		}}
		h := start(t, 10*time.Millisecond, p)
		h.run()
		time.Sleep(100*time.Millisecond + 200*time.Millisecond + 400*time.Millisecond)
		synctest.Wait()
		h.stop()
		if got := runs.Load(); got != 4 {
			t.Errorf("got %d runs in 700ms, want 4 (backoff 100, 200, 400ms)", got)
		}
		if st := h.agg.Sources()["x"]; st.LastError != "run returned before its context was done" {
			t.Errorf("last error %q", st.LastError)
		}
	})
}

type providerFunc struct {
	name string
	run  func(context.Context, func(providers.Snapshot)) error
}

func (p providerFunc) Name() string { return p.name }
func (p providerFunc) Run(ctx context.Context, publish func(providers.Snapshot)) error {
	return p.run(ctx, publish)
}

func TestSeedKeepsStoredPartsUntilProviderPublishes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stored, err := providers.Merge(map[string]providers.Snapshot{
			"file":   routers("a"),
			"docker": routers("web"),
			"gone":   routers("old"),
		})
		if err != nil {
			t.Fatal(err)
		}
		f, d := providertest.New("file"), providertest.New("docker")
		h := start(t, 10*time.Millisecond, f, d)
		h.agg.Seed(stored)
		if st := h.agg.Sources()["docker"]; st.State != providers.StateStored {
			t.Errorf("docker state %q, want stored", st.State)
		}
		h.run()
		defer h.stop()

		// file publishes the stored content: unchanged except that "gone" is
		// not a provider any more, so one apply without old@gone.
		f.Publish(routers("a"))
		time.Sleep(10 * time.Millisecond)
		h.wantApplies(1)
		if got, want := h.names(0), []string{"a@file", "web@docker"}; !slices.Equal(got, want) {
			t.Errorf("applied %v, want %v", got, want)
		}
		if got := h.merged(0).Sources["docker"].State; got != providers.StateStored {
			t.Errorf("docker state %q, want stored", got)
		}
		d.Publish(routers("api"))
		time.Sleep(10 * time.Millisecond)
		h.wantApplies(2)
		if got, want := h.names(1), []string{"a@file", "api@docker"}; !slices.Equal(got, want) {
			t.Errorf("applied %v, want %v", got, want)
		}
	})
}

func TestSeedUnchangedIsNotReapplied(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stored, _ := providers.Merge(map[string]providers.Snapshot{"file": routers("a")})
		f := providertest.New("file")
		h := start(t, 10*time.Millisecond, f)
		h.agg.Seed(stored)
		h.run()
		defer h.stop()
		f.Publish(routers("a"))
		time.Sleep(time.Second)
		h.wantApplies(0)
	})
}

// A static configuration reloaded live (issue 18) replaces, adds and
// removes providers while Run runs: the replaced one's last snapshot stays
// until its successor publishes, the others are untouched, a removed one's
// objects go away.
func TestReplaceAddRemoveWhileRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		old, other := providertest.New("file"), providertest.New("docker")
		h := start(t, 100*time.Millisecond, old, other)
		h.run()
		defer h.stop()
		old.Publish(routers("a"))
		other.Publish(routers("d"))
		time.Sleep(time.Second)
		h.wantApplies(1)
		if got := h.names(0); !slices.Equal(got, []string{"a@file", "d@docker"}) {
			t.Fatalf("applied %v", got)
		}

		repl := providertest.New("file")
		h.agg.Replace(repl)
		synctest.Wait()
		if old.Running() {
			t.Fatal("the replaced provider still runs")
		}
		if !repl.Running() || other.Runs() != 1 {
			t.Fatalf("replacement running %v, untouched provider ran %d times (want 1)", repl.Running(), other.Runs())
		}
		time.Sleep(time.Second)
		h.wantApplies(1) // nothing published yet: the old snapshot stays
		if st := h.agg.Sources()["file"].State; st != providers.StateStarting {
			t.Errorf("replaced provider's state %q, want starting", st)
		}
		repl.Publish(routers("b"))
		time.Sleep(time.Second)
		h.wantApplies(2)
		if got := h.names(1); !slices.Equal(got, []string{"b@file", "d@docker"}) {
			t.Fatalf("after the replacement published: %v", got)
		}

		added := providertest.New("consulcatalog")
		added.Publish(routers("c"))
		h.agg.Replace(added)
		time.Sleep(time.Second)
		h.wantApplies(3)
		if got := h.names(2); !slices.Equal(got, []string{"b@file", "c@consulcatalog", "d@docker"}) {
			t.Fatalf("after adding: %v", got)
		}

		h.agg.Remove("docker")
		time.Sleep(time.Second)
		h.wantApplies(4)
		if other.Running() {
			t.Error("the removed provider still runs")
		}
		if got := h.names(3); !slices.Equal(got, []string{"b@file", "c@consulcatalog"}) {
			t.Fatalf("after removing: %v", got)
		}
		if _, ok := h.agg.Sources()["docker"]; ok {
			t.Error("the removed provider is still listed in Sources")
		}
	})
}

// Replace before Run changes what Run starts.
func TestReplaceBeforeRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first, second := providertest.New("file"), providertest.New("file")
		h := start(t, 100*time.Millisecond, first)
		h.agg.Replace(second)
		second.Publish(routers("x"))
		h.run()
		defer h.stop()
		time.Sleep(time.Second)
		h.wantApplies(1)
		if first.Runs() != 0 || second.Runs() != 1 {
			t.Errorf("runs: first %d, second %d; want 0 and 1", first.Runs(), second.Runs())
		}
	})
}

// Issue 23: a Down snapshot keeps the provider's configuration (published
// or stored), shows its problem and state "down" with the error; the next
// snapshot clears both.
func TestDownKeepsConfigAndShowsTheOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stored, err := providers.Merge(map[string]providers.Snapshot{"consul": routers("web")})
		if err != nil {
			t.Fatal(err)
		}
		c := providertest.New("consul")
		h := start(t, 10*time.Millisecond, c)
		h.agg.Seed(stored)
		h.run()
		defer h.stop()

		// Down after a restart: the stored routes stay, the outage shows.
		c.Publish(providers.DownSnapshot("consul", "consul catalog", errors.New("connection refused")))
		time.Sleep(10 * time.Millisecond)
		h.wantApplies(1)
		m := h.merged(0)
		if got := h.names(0); !slices.Equal(got, []string{"web@consul"}) {
			t.Errorf("while down after a restart: routers %v, want the stored web@consul", got)
		}
		st := h.agg.Sources()["consul"]
		if st.State != providers.StateDown || !strings.Contains(st.LastError, "consul catalog unreachable: connection refused") ||
			len(m.Problems) != 1 || m.Problems[0].Source != "consul catalog" {
			t.Fatalf("state %+v, problems %+v; want down with the error and one problem", st, m.Problems)
		}
		c.Publish(routers("web", "api"))
		time.Sleep(10 * time.Millisecond)
		h.wantApplies(2)
		if st := h.agg.Sources()["consul"]; st.State != providers.StateOK || len(h.merged(1).Problems) != 0 {
			t.Errorf("after recovery: state %+v, problems %v; want ok and none", st, h.merged(1).Problems)
		}
		// Down again: the last published routes stay.
		c.Publish(providers.DownSnapshot("consul", "consul catalog", errors.New("i/o timeout")))
		time.Sleep(10 * time.Millisecond)
		h.wantApplies(3)
		if got := h.names(2); !slices.Equal(got, []string{"api@consul", "web@consul"}) || h.agg.Sources()["consul"].State != providers.StateDown {
			t.Errorf("down: routers %v state %q; want the last published ones, down", got, h.agg.Sources()["consul"].State)
		}
		// Down, then Run fails (the Docker provider does: it is restarted
		// with backoff): still "down", with the failure as the error.
		c.Fail(errors.New("ping: connection refused"))
		synctest.Wait()
		if st := h.agg.Sources()["consul"]; st.State != providers.StateDown || st.LastError != "ping: connection refused" || st.Restarts != 1 {
			t.Errorf("down, then failed: %+v; want down with the failure and 1 restart", st)
		}
	})
}
