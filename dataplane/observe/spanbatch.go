package observe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// bspConfig is the SDK batch span processor's configuration, from the same
// variables and with the same defaults: OTEL_BSP_MAX_QUEUE_SIZE (spans
// waiting, 2048; more are dropped and counted), OTEL_BSP_MAX_EXPORT_BATCH_SIZE
// (spans per export, 512; at most the queue size),
// OTEL_BSP_SCHEDULE_DELAY (ms between exports of a batch not full, 5000),
// OTEL_BSP_EXPORT_TIMEOUT (ms one export may take, 30000; 0 or less:
// none). A variable that is not an integer, or a size or delay not
// positive, leaves the default.
type bspConfig struct {
	queue, batch   int
	delay, timeout time.Duration
}

func bspConfigFromEnv() bspConfig {
	c := bspConfig{
		queue:   envInt(2048, "OTEL_BSP_MAX_QUEUE_SIZE"),
		batch:   envInt(512, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE"),
		delay:   time.Duration(envInt(5000, "OTEL_BSP_SCHEDULE_DELAY")) * time.Millisecond,
		timeout: time.Duration(envInt(30000, "OTEL_BSP_EXPORT_TIMEOUT")) * time.Millisecond,
	}
	if c.queue <= 0 {
		c.queue = 2048
	}
	if c.batch <= 0 {
		c.batch = 512
	}
	if c.batch > c.queue {
		c.batch = min(512, c.queue) // as the SDK does
	}
	if c.delay <= 0 {
		c.delay = 5 * time.Second
	}
	return c
}

// spanBatcher queues ended spans and exports them in batches from one
// goroutine (Run), as the SDK's batch span processor does: a span ended
// while maxQueue wait is dropped (Dropped counts them); a full batch is
// exported at once, a partial one after the schedule delay; Shutdown
// exports what is queued and shuts the exporter down.
type spanBatcher struct {
	exp  sdktrace.SpanExporter
	free *spanFree // exp keeps nothing after ExportSpans: spans are reused; else nil
	cfg  bspConfig

	mu       sync.Mutex
	queue    []*span
	queued   atomic.Int32 // len(queue), stored under mu
	dropped  int64
	reported int64 // dropped when last logged
	closed   bool

	full     chan struct{} // a batch is queued (capacity 1)
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
	batch    []sdktrace.ReadOnlySpan // Run's
}

func newSpanBatcher(exp sdktrace.SpanExporter, cfg bspConfig) *spanBatcher {
	b := &spanBatcher{
		exp: exp, cfg: cfg,
		queue: make([]*span, 0, cfg.batch),
		full:  make(chan struct{}, 1),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
		batch: make([]sdktrace.ReadOnlySpan, 0, cfg.batch),
	}
	if _, own := exp.(*spanExporter); own {
		b.free = &spanFree{max: cfg.queue + cfg.batch}
	}
	go b.run()
	return b
}

// newSpan is a cleared span for a request: one exported before when the
// exporter keeps nothing, else a new one.
func (b *spanBatcher) newSpan() *span {
	if b.free != nil {
		return b.free.get()
	}
	return newSpan()
}

// enqueue queues an ended span; it is dropped (counted) when the queue is
// full, and forgotten after Shutdown. For Gantry's own exporter it is
// encoded first (span.enc), unless the queue was full a moment before
// (queued, read without the lock; then the exporter encodes it if it is
// queued after all), and a span not queued is kept for reuse at once.
func (b *spanBatcher) enqueue(s *span) {
	if b.free != nil && int(b.queued.Load()) < b.cfg.queue {
		s.enc = appendSpan(s.enc[:0], s)
	}
	b.mu.Lock()
	queued := false
	switch {
	case b.closed:
	case len(b.queue) >= b.cfg.queue:
		b.dropped++
	default:
		b.queue = append(b.queue, s)
		queued = true
		if len(b.queue) == b.cfg.batch {
			select {
			case b.full <- struct{}{}:
			default:
			}
		}
	}
	b.queued.Store(int32(len(b.queue)))
	b.mu.Unlock()
	if !queued && b.free != nil {
		b.free.keep(s)
	}
}

// Dropped is the number of spans dropped so far because the queue was full.
func (b *spanBatcher) Dropped() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dropped
}

// run exports batches until Shutdown, then what is left.
func (b *spanBatcher) run() {
	defer close(b.done)
	timer := time.NewTimer(b.cfg.delay)
	defer timer.Stop()
	for {
		select {
		case <-b.stop:
			for b.exportBatch(false) {
			}
			return
		case <-b.full:
			for b.exportBatch(true) {
			}
		case <-timer.C:
			for b.exportBatch(false) {
			}
		}
		timer.Reset(b.cfg.delay)
	}
}

// exportBatch exports up to one batch from the front of the queue; only a
// full one when fullOnly. It reports whether more spans wait.
func (b *spanBatcher) exportBatch(fullOnly bool) bool {
	b.mu.Lock()
	n := min(len(b.queue), b.cfg.batch)
	if n == 0 || fullOnly && n < b.cfg.batch {
		b.mu.Unlock()
		return false
	}
	for _, s := range b.queue[:n] {
		b.batch = append(b.batch, s)
	}
	rest := copy(b.queue, b.queue[n:])
	clear(b.queue[rest:])
	b.queue = b.queue[:rest]
	b.queued.Store(int32(rest))
	more := rest > 0
	newDrops := b.dropped - b.reported
	b.reported = b.dropped
	b.mu.Unlock()

	if newDrops > 0 {
		slog.Warn("tracing: span queue full (OTEL_BSP_MAX_QUEUE_SIZE), spans dropped", "dropped", newDrops, "queue", b.cfg.queue)
	}
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if b.cfg.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, b.cfg.timeout)
	}
	err := b.exp.ExportSpans(ctx, b.batch)
	cancel()
	if err != nil {
		slog.Warn("tracing: exporting spans failed", "spans", len(b.batch), "error", err)
	}
	if b.free != nil {
		b.free.put(b.batch)
	}
	clear(b.batch)
	b.batch = b.batch[:0]
	return more
}

// Shutdown stops queueing, exports the spans queued and shuts the
// exporter down; ctx bounds the wait. Only the first call does; a later
// one returns nil, as the SDK's TracerProvider.Shutdown.
func (b *spanBatcher) Shutdown(ctx context.Context) error {
	first := false
	b.stopOnce.Do(func() {
		b.mu.Lock()
		b.closed = true
		b.mu.Unlock()
		close(b.stop)
		first = true
	})
	if !first {
		return nil
	}
	var errs []error
	select {
	case <-b.done:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("exporting the queued spans: %w", ctx.Err()))
	}
	if err := b.exp.Shutdown(ctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
