package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/docker/engineapi"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeAPI is a Docker API for the watcher's error paths: Ping fails with
// pingErr; the event stream is driven by the test.
type fakeAPI struct {
	pingErr  error
	mu       sync.Mutex
	lists    int
	inspects int
	running  []engineapi.Container
	evs      chan engineapi.Event
	errs     chan error
}

func (f *fakeAPI) Ping(context.Context) (engineapi.Ping, error) { return engineapi.Ping{}, f.pingErr }
func (f *fakeAPI) Close() error                                 { return nil }

func (f *fakeAPI) ContainerList(context.Context) ([]engineapi.Summary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	var out []engineapi.Summary
	for _, c := range f.running {
		out = append(out, engineapi.Summary{ID: c.ID, Names: []string{c.Name}, State: c.State.Status})
	}
	return out, nil
}

func (f *fakeAPI) ContainerInspect(_ context.Context, id string) (engineapi.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inspects++
	for _, c := range f.running {
		if c.ID == id {
			return c, nil
		}
	}
	return engineapi.Container{}, fmt.Errorf("inspect %s: %w", id, engineapi.ErrNotFound)
}

func (f *fakeAPI) Events(context.Context, ...string) (<-chan engineapi.Event, <-chan error) {
	return f.evs, f.errs
}

func (f *fakeAPI) counts() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lists, f.inspects
}

func inspected(id, name, ip string) engineapi.Container {
	c := engineapi.Container{ID: id, Name: "/" + name, State: engineapi.State{Status: "running"}}
	c.Config.Labels = map[string]string{"gantry.http.services.s.loadbalancer.server.port": "80"}
	c.NetworkSettings.Networks = map[string]*engineapi.Endpoint{"n": {IPAddress: ip}}
	return c
}

func newFakeProvider(t *testing.T, f *fakeAPI) *Provider {
	t.Helper()
	p, err := New(static.Docker{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.newClient = func() (dockerAPI, error) { return f, nil }
	return p
}

// TestRunUnreachable is case 016: an engine that cannot be reached makes Run
// fail (the aggregator retries with backoff) after publishing only a Down
// snapshot (issue 23: a problem, while the last snapshot stays in effect).
func TestRunUnreachable(t *testing.T) {
	f := &fakeAPI{pingErr: errors.New("dial unix /var/run/docker.sock: connect: permission denied")}
	p := newFakeProvider(t, f)
	var got []providers.Snapshot
	err := p.Run(context.Background(), func(s providers.Snapshot) { got = append(got, s) })
	if err == nil || !errors.Is(err, f.pingErr) {
		t.Fatalf("got %v, want an error wrapping %v", err, f.pingErr)
	}
	if len(got) != 1 || got[0].Down == "" || got[0].Config != nil {
		t.Fatalf("published %+v while unreachable, want one Down snapshot", got)
	}
}

// TestRunEventStreamBreaks: after the first snapshot, a broken event stream
// (the daemon stopped) ends Run with an error and no empty snapshot (a Down
// one, which keeps the configuration).
func TestRunEventStreamBreaks(t *testing.T) {
	f := &fakeAPI{
		running: []engineapi.Container{inspected("c1", "web-1", "192.0.2.1")},
		evs:     make(chan engineapi.Event), errs: make(chan error, 1),
	}
	p := newFakeProvider(t, f)
	var got []providers.Snapshot
	f.errs <- io.ErrUnexpectedEOF
	err := p.Run(context.Background(), func(s providers.Snapshot) { got = append(got, s) })
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %v, want an error wrapping %v", err, io.ErrUnexpectedEOF)
	}
	if len(got) != 2 || len(got[0].Config.HTTP.Services["s"].LoadBalancer.Servers) != 1 || got[1].Down == "" || got[1].Config != nil {
		t.Fatalf("got %d snapshots (%+v), want the initial snapshot with one server, then a Down one", len(got), got)
	}
}

// TestRunEvents: relevant events re-list (inspecting only changed
// containers); exec events from health checks do not; an unchanged
// snapshot is not published again; cancelling ctx returns nil.
func TestRunEvents(t *testing.T) {
	f := &fakeAPI{
		running: []engineapi.Container{inspected("c1", "web-1", "192.0.2.1")},
		evs:     make(chan engineapi.Event), errs: make(chan error),
	}
	p := newFakeProvider(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	published := make(chan providers.Snapshot, 10)
	done := make(chan error)
	go func() { done <- p.Run(ctx, func(s providers.Snapshot) { published <- s }) }()
	<-published
	send := func(typ, action string) {
		f.evs <- engineapi.Event{Type: typ, Action: action}
	}
	// Irrelevant, then relevant but unchanged: no publish, one more list.
	send("container", "exec_start: /probe")
	send("container", "health_status: healthy")
	// Let that re-list finish before the next event, so the two do not
	// coalesce into one (bursts do, by design) and the count below is exact.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if lists, _ := f.counts(); lists >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("health_status did not re-list")
		}
	}
	// A second replica starts: published with two servers; only it is inspected.
	f.mu.Lock()
	f.running = append(f.running, inspected("c2", "web-2", "192.0.2.2"))
	f.mu.Unlock()
	send("network", "connect")
	s := <-published
	if n := len(s.Config.HTTP.Services["s"].LoadBalancer.Servers); n != 2 {
		t.Fatalf("got %d servers, want 2", n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
	lists, inspects := f.counts()
	if lists != 3 || inspects != 2 {
		t.Errorf("got %d lists and %d inspects, want 3 and 2", lists, inspects)
	}
	if len(published) != 0 {
		t.Errorf("%d unexpected publishes", len(published))
	}
}

// TestListLabelBound: the labels of all of an engine's containers are held
// up to maxEngineLabelBytes; the container that crosses it makes the list
// an error naming it (Run fails, the aggregator retries, the last good
// configuration stays), however many more containers there are.
func TestListLabelBound(t *testing.T) {
	old := maxEngineLabelBytes
	maxEngineLabelBytes = 2500
	t.Cleanup(func() { maxEngineLabelBytes = old })
	f := &fakeAPI{evs: make(chan engineapi.Event), errs: make(chan error)}
	for i := range 100 {
		c := inspected(fmt.Sprintf("c%03d", i), fmt.Sprintf("web-%d", i), "192.0.2.1")
		c.Config.Labels["gantry.http.routers.r.rule"] = "Host(`" + strings.Repeat("a", 900) + "`)"
		f.running = append(f.running, c)
	}
	p := newFakeProvider(t, f)
	var got []providers.Snapshot
	err := p.Run(context.Background(), func(s providers.Snapshot) { got = append(got, s) })
	if err == nil || !strings.Contains(err.Error(), "container web-2 (c002)") || !strings.Contains(err.Error(), "over the 2500 held at most") {
		t.Fatalf("got %v, want the list refused at the third container", err)
	}
	// The engine answered: the problem says failing, not unreachable.
	if len(got) != 1 || len(got[0].Problems) != 1 || !strings.HasPrefix(got[0].Problems[0].Message, "failing: ") {
		t.Errorf("published %+v, want one Down snapshot whose problem says failing", got)
	}
	if _, inspects := f.counts(); inspects != 3 {
		t.Errorf("%d containers inspected, want 3 (none after the bound)", inspects)
	}
}

// TestEventStreamListsBounded: an engine sending a relevant event every
// millisecond for two seconds (fake time) costs one list per
// relistInterval, not one per event, and the change made during the
// stream is published once it has been listed.
func TestEventStreamListsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeAPI{
			running: []engineapi.Container{inspected("c1", "web-1", "192.0.2.1")},
			evs:     make(chan engineapi.Event), errs: make(chan error),
		}
		p := newFakeProvider(t, f)
		ctx, cancel := context.WithCancel(t.Context())
		var mu sync.Mutex
		var last providers.Snapshot
		done := make(chan error)
		go func() {
			done <- p.Run(ctx, func(s providers.Snapshot) { mu.Lock(); last = s; mu.Unlock() })
		}()
		synctest.Wait()
		const events = 2000
		for i := range events {
			if i == events/2 {
				f.mu.Lock()
				f.running = append(f.running, inspected("c2", "web-2", "192.0.2.2"))
				f.mu.Unlock()
			}
			f.evs <- engineapi.Event{Type: "container", Action: "start"}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(2 * relistInterval)
		synctest.Wait()
		lists, _ := f.counts()
		// One list at the start, one per 100 ms of the stream, one after it.
		if maxLists := 1 + events/100 + 1; lists > maxLists {
			t.Errorf("%d events made %d lists, want at most %d", events, lists, maxLists)
		}
		mu.Lock()
		n := len(last.Config.HTTP.Services["s"].LoadBalancer.Servers)
		mu.Unlock()
		if n != 2 {
			t.Errorf("last snapshot has %d servers, want 2 (the container started during the stream)", n)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
	})
}
