package providers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/config"
)

// DefaultDebounce is Gantry's default quiet window between the last published
// snapshot and the merge (Traefik's providersThrottleDuration defaults to 2s).
const DefaultDebounce = 100 * time.Millisecond

// Restart backoff of a provider whose Run fails or panics: the delay starts
// at MinBackoff and doubles up to MaxBackoff. A Run that lasted at least
// MaxBackoff before failing starts again from MinBackoff.
const (
	MinBackoff = 100 * time.Millisecond
	MaxBackoff = 10 * time.Second
)

// maxDelayFactor bounds how long a stream of publishes can postpone a merge:
// at most maxDelayFactor debounce windows after the first unmerged publish.
const maxDelayFactor = 10

// Source states (SourceState.State).
const (
	StateStarting = "starting"
	StateOK       = "ok"
	StateError    = "error"
	StateStored   = "stored"
	StateDown     = "down"
)

// Aggregator runs providers, keeps the latest Snapshot of each (latest
// wins), waits for a quiet debounce window, merges (see Merge) and hands
// every new Merged configuration to apply. It is safe for concurrent use;
// Run is called once. Providers can be replaced, added and removed while
// it runs (Replace, Remove: a static configuration reloaded live).
type Aggregator struct {
	log      *slog.Logger
	debounce atomic.Int64  // time.Duration
	dirty    chan struct{} // capacity 1: "some snapshot changed"

	mu        sync.Mutex
	providers []Provider
	snaps     map[string]Snapshot // latest published, or seeded from the store
	states    map[string]SourceState
	last      string // Version last applied (or seeded)
	// While Run runs: its context, its providers' goroutines and how to
	// stop each one.
	runCtx  context.Context
	wg      sync.WaitGroup
	running map[string]*runningProvider
}

// runningProvider is one provider's supervisor goroutine.
type runningProvider struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// NewAggregator returns an Aggregator over ps. debounce is the quiet window
// after the last publish before merging; 0 or less means DefaultDebounce.
// Provider names must be unique and must not contain '@'.
func NewAggregator(log *slog.Logger, debounce time.Duration, ps ...Provider) *Aggregator {
	a := &Aggregator{
		log:       log,
		providers: slices.Clone(ps),
		dirty:     make(chan struct{}, 1),
		snaps:     map[string]Snapshot{},
		states:    map[string]SourceState{},
		running:   map[string]*runningProvider{},
	}
	a.SetDebounce(debounce)
	for _, p := range ps {
		a.states[p.Name()] = SourceState{State: StateStarting}
	}
	return a
}

// SetDebounce changes the quiet window (0 or less: DefaultDebounce); the
// next merge uses it.
func (a *Aggregator) SetDebounce(d time.Duration) {
	if d <= 0 {
		d = DefaultDebounce
	}
	a.debounce.Store(int64(d))
}

// Replace runs p instead of the provider of the same name, or adds it when
// there is none. The old instance is stopped (its Run returned) before p
// starts, and its last snapshot stays in effect, with state "starting",
// until p publishes: routes never disappear in between. Before Run, it only
// changes the list Run will start.
func (a *Aggregator) Replace(p Provider) {
	name := p.Name()
	a.stop(name)
	a.mu.Lock()
	defer a.mu.Unlock()
	i := slices.IndexFunc(a.providers, func(q Provider) bool { return q.Name() == name })
	if i < 0 {
		a.providers = append(a.providers, p)
	} else {
		a.providers[i] = p
	}
	st := a.states[name]
	st.State = StateStarting
	a.states[name] = st
	if a.runCtx != nil {
		a.startLocked(p)
	}
}

// Remove stops the provider named name (waiting for its Run to return) and
// drops its snapshot, so the next merge no longer holds its objects. An
// unknown name is a no-op.
func (a *Aggregator) Remove(name string) {
	a.stop(name)
	a.mu.Lock()
	a.providers = slices.DeleteFunc(a.providers, func(q Provider) bool { return q.Name() == name })
	_, had := a.snaps[name]
	delete(a.snaps, name)
	delete(a.states, name)
	a.mu.Unlock()
	if had {
		a.markDirty()
	}
}

// stop cancels the running provider named name and waits for it.
func (a *Aggregator) stop(name string) {
	a.mu.Lock()
	r := a.running[name]
	delete(a.running, name)
	a.mu.Unlock()
	if r != nil {
		r.cancel()
		<-r.done
	}
}

// startLocked starts p's supervisor under Run's context. a.mu is held.
func (a *Aggregator) startLocked(p Provider) {
	ctx, cancel := context.WithCancel(a.runCtx)
	r := &runningProvider{cancel: cancel, done: make(chan struct{})}
	a.running[p.Name()] = r
	a.wg.Go(func() {
		defer close(r.done)
		defer cancel()
		a.supervise(ctx, p)
	})
}

func (a *Aggregator) markDirty() {
	select {
	case a.dirty <- struct{}{}:
	default:
	}
}

// Seed installs m, the last good configuration from the store, as the
// starting point: for every provider that has not published yet, its part
// of m (the objects qualified "@name", its TLS certificates and defaults,
// its problems) stays in effect, with state "stored", until it publishes.
// Parts of providers not run by a are dropped. m's Version counts as
// applied, so an unchanged configuration is not applied again. Call Seed
// before Run.
func (a *Aggregator) Seed(m *Merged) {
	if m == nil || m.Config == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range a.providers {
		name := p.Name()
		if st := a.states[name]; st.State != StateStarting {
			continue
		}
		s := Split(m, name)
		a.snaps[name] = s
		a.states[name] = SourceState{State: StateStored, Problems: len(s.Problems)}
	}
	a.last = m.Version
}

// Sources returns a copy of what the aggregator knows of each provider,
// keyed by provider name (for /api/providers).
func (a *Aggregator) Sources() map[string]SourceState {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.states)
}

// Run starts every provider in its own goroutine and merges their snapshots
// until ctx is done; it then waits for the providers to return and returns
// nil. apply is called from Run's goroutine only, never concurrently, never
// twice in a row with the same Version. A merge that fails is logged and
// skipped.
func (a *Aggregator) Run(ctx context.Context, apply func(context.Context, *Merged)) error {
	a.mu.Lock()
	a.runCtx = ctx
	for _, p := range a.providers {
		a.startLocked(p)
	}
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		for _, r := range a.running {
			r.cancel()
		}
		a.running, a.runCtx = map[string]*runningProvider{}, nil
		a.mu.Unlock()
		a.wg.Wait()
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-a.dirty:
		}
		if !a.settle(ctx) {
			return nil
		}
		m, err := a.merged()
		if err != nil {
			a.log.Error("merge configuration", "error", err)
			continue
		}
		if m == nil {
			continue // unchanged
		}
		apply(ctx, m)
	}
}

// settle waits until no publish has arrived for one debounce window (or
// maxDelayFactor windows have passed since the first), then drains the
// pending signal so that a publish that arrived meanwhile, already included
// in the coming merge, does not cause a second one. It returns false when
// ctx is done.
func (a *Aggregator) settle(ctx context.Context) bool {
	debounce := time.Duration(a.debounce.Load())
	if !Settle(ctx, a.dirty, debounce, maxDelayFactor*debounce, nil) {
		return false
	}
	select {
	case <-a.dirty:
	default:
	}
	return true
}

// merged merges the current snapshots; it returns nil, nil when the
// Version equals the last one applied, and records the Version otherwise.
func (a *Aggregator) merged() (*Merged, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	m, err := Merge(a.snaps)
	if err != nil {
		return nil, err
	}
	if m.Version == a.last {
		return nil, nil
	}
	a.last = m.Version
	m.Sources = maps.Clone(a.states)
	return m, nil
}

// supervise runs p until ctx is done, restarting it with exponential backoff
// after an error, an early nil return or a panic.
func (a *Aggregator) supervise(ctx context.Context, p Provider) {
	name := p.Name()
	log := a.log.With("provider", name)
	bo := Backoff{Min: MinBackoff, Max: MaxBackoff}
	for {
		started := time.Now()
		err := a.runOnce(ctx, p)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errors.New("run returned before its context was done")
		}
		backoff := bo.Failed(started)
		a.mu.Lock()
		st := a.states[name]
		if st.State != StateDown { // a provider that said it is down stays down until it answers
			st.State = StateError
		}
		st.LastError = err.Error()
		st.LastErrorAt = time.Now()
		st.Restarts++
		a.states[name] = st
		a.mu.Unlock()
		log.Warn("provider failed; its last configuration stays in effect", "error", err, "retry_in", backoff)
		if !Sleep(ctx, backoff) {
			return
		}
	}
}

// runOnce runs p once, turning a panic into an error and ignoring publishes
// made after Run returned.
func (a *Aggregator) runOnce(ctx context.Context, p Provider) (err error) {
	name := p.Name()
	var mu sync.Mutex
	done := false
	defer func() {
		mu.Lock()
		done = true
		mu.Unlock()
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, firstLines(debug.Stack(), 12))
		}
	}()
	publish := func(s Snapshot) {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return
		}
		a.publish(name, s)
	}
	return p.Run(ctx, publish)
}

func (a *Aggregator) publish(name string, s Snapshot) {
	if s.Config == nil {
		s.Config = &config.Configuration{}
	}
	a.mu.Lock()
	st := a.states[name]
	keepStored := false
	if s.Down != "" {
		s.KeepConfig = true
	}
	if s.KeepConfig {
		prev := a.snaps[name]
		s.Config, s.Origins, s.KeepConfig = prev.Config, prev.Origins, false
		if s.Config == nil {
			s.Config = &config.Configuration{}
		}
		keepStored = st.State == StateStored
	}
	down := s.Down
	s.Down = ""
	a.snaps[name] = s
	switch {
	case down != "":
		st.State, st.LastError, st.LastErrorAt = StateDown, down, time.Now()
	case !keepStored:
		st.State = StateOK
	}
	st.LastPublish = time.Now()
	st.Problems = len(s.Problems)
	a.states[name] = st
	a.mu.Unlock()
	a.markDirty()
}

func firstLines(b []byte, n int) string {
	lines := strings.SplitN(string(b), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
