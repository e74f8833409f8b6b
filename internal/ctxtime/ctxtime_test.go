package ctxtime

import (
	"context"
	"testing"
	"time"
)

func TestSleepWaitsTheDuration(t *testing.T) {
	start := time.Now()
	if !Sleep(context.Background(), 20*time.Millisecond) {
		t.Fatal("Sleep reported the context ended; it never does")
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Fatalf("Sleep returned after %v, before the 20ms it was asked to wait", d)
	}
}

func TestSleepStopsWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool)
	go func() { done <- Sleep(ctx, time.Hour) }()
	cancel()
	select {
	case ok := <-done:
		if ok {
			t.Fatal("Sleep reported the hour elapsed after its context was canceled")
		}
	case <-time.After(time.Minute):
		t.Fatal("Sleep did not return after its context was canceled")
	}
}

func TestSleepWithoutADurationDoesNotWait(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, d := range []time.Duration{0, -time.Second} {
		if !Sleep(ctx, d) {
			t.Errorf("Sleep(canceled, %v) = false; a wait of nothing is always done", d)
		}
	}
}
