package observe

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// gateExporter records the size of each batch; while gate is open (not
// nil) each export waits for it to be closed.
type gateExporter struct {
	mu      sync.Mutex
	sizes   []int
	entered chan struct{} // an export began (capacity 16)
	gate    chan struct{}
	stopped int // Shutdown calls
}

func (g *gateExporter) ExportSpans(_ context.Context, s []sdktrace.ReadOnlySpan) error {
	g.entered <- struct{}{}
	if g.gate != nil {
		<-g.gate
	}
	g.mu.Lock()
	g.sizes = append(g.sizes, len(s))
	g.mu.Unlock()
	return nil
}
func (g *gateExporter) Shutdown(context.Context) error {
	g.mu.Lock()
	g.stopped++
	g.mu.Unlock()
	return nil
}

func (g *gateExporter) batches() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.sizes)
}

// TestSpanBatcherQueueAndBatches: the batcher keeps the SDK batch span
// processor's semantics: a full batch is exported at once; while the
// exporter is busy at most the queue size waits and the rest is dropped
// and counted; queued spans go in batches of the batch size; a partial
// batch goes after the schedule delay; Shutdown exports what is queued.
func TestSpanBatcherQueueAndBatches(t *testing.T) {
	g := &gateExporter{entered: make(chan struct{}, 16), gate: make(chan struct{})}
	b := newSpanBatcher(g, bspConfig{queue: 4, batch: 2, delay: time.Hour})
	b.enqueue(&span{})
	b.enqueue(&span{})
	<-g.entered // the first (full) batch is being exported; nothing waited for the delay
	for range 5 {
		b.enqueue(&span{})
	}
	if d := b.Dropped(); d != 1 {
		t.Errorf("dropped %d with the exporter busy, 4 queued, 5 ended: want 1", d)
	}
	close(g.gate)
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := g.batches(); !slices.Equal(got, []int{2, 2, 2}) {
		t.Errorf("batch sizes %v, want [2 2 2]: the first, then the 4 queued", got)
	}

	g = &gateExporter{entered: make(chan struct{}, 16)}
	b = newSpanBatcher(g, bspConfig{queue: 8, batch: 4, delay: time.Hour})
	for range 3 {
		b.enqueue(&span{})
	}
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := g.batches(); !slices.Equal(got, []int{3}) {
		t.Errorf("batch sizes %v, want [3]: the partial batch at Shutdown", got)
	}
	if err := b.Shutdown(context.Background()); err != nil || g.stopped != 1 {
		t.Errorf("second Shutdown: %v, exporter shut down %d times, want nil and once", err, g.stopped)
	}

	g = &gateExporter{entered: make(chan struct{}, 16)}
	b = newSpanBatcher(g, bspConfig{queue: 8, batch: 4, delay: 20 * time.Millisecond})
	b.enqueue(&span{})
	<-g.entered // exported after the delay although the batch is not full
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := g.batches(); !slices.Equal(got, []int{1}) {
		t.Errorf("batch sizes %v, want [1] (the partial batch after the delay)", got)
	}
	b.enqueue(&span{}) // after Shutdown: forgotten
	if b.Dropped() != 0 || len(b.queue) != 0 {
		t.Error("a span ended after Shutdown was queued or counted dropped")
	}
}

// TestSpanAttributesAsTheSDK: a span's attributes come out as the SDK's
// recording span makes them from one SetAttributes call: an empty key
// dropped, a repeated key in its first place with its last value, keys
// past the count limit dropped and counted, strings cut to the length
// limit (in characters).
func TestSpanAttributesAsTheSDK(t *testing.T) {
	attrs := []attribute.KeyValue{
		attribute.String("a", "1"), attribute.String("", "x"), attribute.String("b", "2"),
		attribute.String("a", "héllo wörld"), attribute.Int("c", 3), attribute.String("d", "4"),
		attribute.StringSlice("e", []string{"long value", "v"}), attribute.Bool("b", true),
	}
	for _, lim := range []spanLimits{{count: 128, length: -1}, {count: 3, length: -1}, {count: 8, length: 4}, {count: 0, length: 0}} {
		mem := tracetest.NewInMemoryExporter()
		p := sdktrace.NewTracerProvider(sdktrace.WithSyncer(mem), sdktrace.WithRawSpanLimits(sdktrace.SpanLimits{
			AttributeCountLimit: lim.count, AttributeValueLengthLimit: lim.length,
			EventCountLimit: -1, LinkCountLimit: -1, AttributePerEventCountLimit: -1, AttributePerLinkCountLimit: -1,
		}))
		_, s := p.Tracer("t").Start(context.Background(), "s")
		s.SetAttributes(attrs...)
		s.End()
		want := mem.GetSpans()[0]

		tr := &Tracing{limits: lim, mayRepeat: true}
		got := &span{attrs: slices.Clone(attrs)}
		tr.limitAttrs(got)
		if len(got.attrs) == 0 {
			got.attrs = nil
		}
		if len(want.Attributes) == 0 {
			want.Attributes = nil
		}
		if !slices.Equal(got.attrs, want.Attributes) || got.dropped != want.DroppedAttributes {
			t.Errorf("limits %+v: attributes %v dropped %d, SDK %v dropped %d", lim, got.attrs, got.dropped, want.Attributes, want.DroppedAttributes)
		}
		_ = p.Shutdown(context.Background())
	}
}

// TestDirectSpanAttributes: a span that encodes its attributes as they are
// set (span.direct) keeps, drops and cuts the same attributes as one that
// keeps them until it ends (limitAttrs), for each kind of value Gantry
// sets, encodes them as the kept ones encode, and gives them back
// (Attributes) as the kept span has them.
func TestDirectSpanAttributes(t *testing.T) {
	attrs := []attribute.KeyValue{
		attribute.String("a", "1"), attribute.String("", "x"), attribute.Int("n", -1),
		attribute.String("u", "héllo wörld"), attribute.Bool("b", true), attribute.Float64("f", 1.5),
		attribute.StringSlice("h", []string{"long value", "v"}), attribute.Int("c", 1<<40),
	}
	for _, lim := range []spanLimits{{count: 128, length: -1}, {count: 3, length: -1}, {count: 8, length: 4}, {count: 0, length: 0}, {count: -1, length: 2}} {
		tr := &Tracing{limits: lim}
		direct, kept := &span{t: tr, direct: true}, &span{t: tr}
		for _, a := range attrs {
			for _, s := range []*span{direct, kept} {
				switch a.Value.Type() {
				case attribute.STRING:
					s.addString(a.Key, a.Value.AsString())
				case attribute.INT64:
					s.addInt(a.Key, int(a.Value.AsInt64()))
				default:
					s.add(a)
				}
			}
		}
		tr.limitAttrs(direct)
		tr.limitAttrs(kept)
		if want := appendKeyValues(nil, fSpanAttributes, kept.attrs); !bytes.Equal(direct.kv, want) {
			t.Errorf("limits %+v: encoded\n%x\nwant\n%x", lim, direct.kv, want)
		}
		got := direct.Attributes()
		if len(kept.attrs) == 0 {
			kept.attrs = nil
		}
		if !slices.Equal(got, kept.attrs) || direct.dropped != kept.dropped || direct.nkv != len(kept.attrs) {
			t.Errorf("limits %+v: attributes %v dropped %d (%d kept), want %v dropped %d", lim, got, direct.dropped, direct.nkv, kept.attrs, kept.dropped)
		}
	}
}
