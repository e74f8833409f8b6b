package docker

import (
	"context"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/providers/docker/engineapi"
)

// relistInterval is the least time between two lists of one engine: a
// stream of events (200 containers of a compose project starting, or an
// engine that sends events without end) costs at most 10 lists a second,
// each taking in every event that came before it; a lone event after a
// quiet spell is listed at once.
const relistInterval = 100 * time.Millisecond

// settle waits d (nothing when d <= 0) while consuming the events that
// arrive, then takes every event already queued. It returns the event
// stream's error if it breaks meanwhile, and nil when ctx ends.
func settle(ctx context.Context, evs <-chan engineapi.Event, errs <-chan error, d time.Duration) error {
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		for waiting := true; waiting; {
			select {
			case <-ctx.Done():
				return nil
			case err := <-errs:
				return err
			case <-evs:
			case <-t.C:
				waiting = false
			}
		}
	}
	for {
		select {
		case <-evs:
		default:
			return nil
		}
	}
}

// relevant reports whether an event can change routing.
func relevant(ev engineapi.Event) bool {
	a := ev.Action
	switch ev.Type {
	case "network":
		return a == "connect" || a == "disconnect"
	case "container":
		switch a {
		case "start", "die", "stop", "kill", "destroy", "pause", "unpause", "rename", "restart":
			return true
		}
		return strings.HasPrefix(a, "health_status")
	}
	return false
}
