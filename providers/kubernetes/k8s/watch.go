package k8s

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"

	"github.com/gantry-proxy/gantry/providers"
)

// Factory is an informer factory Watcher starts and shuts down
// (Informers, or a client-go factory).
type Factory interface {
	Start(stopCh <-chan struct{})
	Shutdown()
}

// Watcher runs a provider's informers and its level-triggered build loop
// (see the package doc). Register informers with Watch and their
// factories with AddFactory before Run; Run may be called again after it
// returned (the aggregator restarts a failed provider) only with a new
// Watcher.
type Watcher struct {
	name     string
	client   *Client
	throttle time.Duration
	log      *slog.Logger

	factories []Factory
	synced    []cache.InformerSynced
	dirty     chan struct{}
}

// NewWatcher returns a Watcher publishing as provider name through client,
// building at most once per throttle (0: as soon as something changed).
func NewWatcher(name string, client *Client, throttle time.Duration, log *slog.Logger) *Watcher {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Watcher{name: name, client: client, throttle: throttle, log: log, dirty: make(chan struct{}, 1)}
}

// Watch makes every add, update (of a new resourceVersion) and delete
// seen by infs trigger a build, and makes Run wait for their caches
// before the first build. Indexers is added to each informer when not
// nil (before it starts).
func (w *Watcher) Watch(indexers cache.Indexers, infs ...cache.SharedIndexInformer) error {
	h := cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { w.mark() },
		UpdateFunc: func(oldObj, newObj any) {
			o, err1 := meta.Accessor(oldObj)
			n, err2 := meta.Accessor(newObj)
			if err1 == nil && err2 == nil && o.GetResourceVersion() == n.GetResourceVersion() {
				return // a relist of an unchanged object
			}
			w.mark()
		},
		DeleteFunc: func(any) { w.mark() },
	}
	for _, inf := range infs {
		if indexers != nil {
			if err := inf.AddIndexers(indexers); err != nil {
				return fmt.Errorf("add indexers: %w", err)
			}
		}
		if _, err := inf.AddEventHandler(h); err != nil {
			return fmt.Errorf("add event handler: %w", err)
		}
		w.synced = append(w.synced, inf.HasSynced)
	}
	return nil
}

// WatchEndpointSlices is Watch for EndpointSlice informers, adding the
// ServiceNameIndex that Backends needs.
func (w *Watcher) WatchEndpointSlices(infs ...cache.SharedIndexInformer) error {
	return w.Watch(ServiceNameIndexers, infs...)
}

// AddFactory registers factories for Run to start and shut down.
func (w *Watcher) AddFactory(fs ...Factory) { w.factories = append(w.factories, fs...) }

// Trigger asks for a build (e.g. after a provider's own state changed).
func (w *Watcher) Trigger() { w.mark() }

func (w *Watcher) mark() {
	select {
	case w.dirty <- struct{}{}:
	default:
	}
}

// syncPoll is how often Run checks whether the caches have synced.
const syncPoll = 50 * time.Millisecond

// Run starts the factories and the health probe, waits for the caches
// (publishing KeepConfig snapshots with the health problems meanwhile),
// then publishes build's snapshot, plus the health problems, after every
// change, until ctx is done. It returns nil then, after the informers and
// the probe have stopped. build reads only the informer caches; it runs
// on Run's goroutine, never concurrently with itself.
func (w *Watcher) Run(ctx context.Context, build func() providers.Snapshot, publish func(providers.Snapshot)) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		for _, f := range w.factories {
			f.Shutdown() // waits for the informers' goroutines
		}
		wg.Wait()
	}()
	for _, f := range w.factories {
		f.Start(ctx.Done())
	}
	wg.Go(func() { w.client.Health.Probe(ctx, w.client.core()) })

	tick := time.NewTicker(syncPoll)
	for !w.allSynced() {
		select {
		case <-ctx.Done():
			tick.Stop()
			return nil
		case <-w.client.Health.Changed():
			ps := w.client.Health.Problems(w.name)
			if len(ps) > 0 {
				w.log.Warn("kubernetes API server not usable yet; keeping the stored configuration", "problem", ps[0].Message)
			}
			publish(providers.Snapshot{KeepConfig: true, Problems: ps})
		case <-tick.C:
		}
	}
	tick.Stop()
	w.log.Info("kubernetes caches synced", "provider", w.name)
	w.mark()
	wasDown := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.dirty:
		case <-w.client.Health.Changed():
		}
		s := build()
		health := w.client.Health.Problems(w.name)
		if down := w.client.Health.Down(); down != wasDown {
			wasDown = down
			if down {
				w.log.Warn("kubernetes API server unreachable; the configuration last read keeps serving", "provider", w.name)
			} else {
				w.log.Info("kubernetes API server reachable again", "provider", w.name)
			}
		}
		if len(health) > 0 {
			s.Problems = append(health, s.Problems...)
		}
		publish(s)
		if w.throttle > 0 && !providers.Sleep(ctx, w.throttle) {
			return nil
		}
	}
}

func (w *Watcher) allSynced() bool {
	for _, s := range w.synced {
		if !s() {
			return false
		}
	}
	return true
}
