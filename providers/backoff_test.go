package providers

import (
	"context"
	"slices"
	"testing"
	"time"
)

// Backoff doubles from Min up to Max and starts again from Min after a
// run that lasted Max; Sleep gives up when its context ends.
func TestBackoff(t *testing.T) {
	b := Backoff{Min: time.Second, Max: 4 * time.Second}
	var got []time.Duration
	for range 4 {
		got = append(got, b.Failed(time.Now()))
	}
	got = append(got, b.Failed(time.Now().Add(-5*time.Second)))
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second, time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("delays %v, want %v", got, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Sleep(ctx, time.Hour) {
		t.Error("Sleep returned true after its context ended")
	}
	if !Sleep(context.Background(), time.Millisecond) {
		t.Error("Sleep returned false with a live context")
	}
	// A wait of nothing is done, whatever the context: the rate limiter
	// and retry middlewares pass 0 for a request that need not wait.
	for range 100 {
		if !Sleep(ctx, 0) {
			t.Fatal("Sleep(ended context, 0) returned false; a wait of nothing is always done")
		}
	}
}
