// Package providertest provides Manual, a hand-driven providers.Provider for
// tests, in the manner of gRPC's resolver/manual: the test publishes
// snapshots and makes Run fail or panic on demand.
package providertest

import (
	"context"
	"sync"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// Manual is a providers.Provider driven by the test. It is safe for
// concurrent use.
//
// Run publishes the last snapshot given to Publish (if any), as a real
// provider re-lists its source on every start, then blocks until its
// context is done (returns nil), Fail is called (returns that error) or
// Panic is called (panics with that value).
type Manual struct {
	name string

	mu      sync.Mutex
	last    *providers.Snapshot
	publish func(providers.Snapshot) // of the active Run, nil when none
	stop    chan func() error        // of the active Run
	runs    int
}

// New returns a Manual provider named name.
func New(name string) *Manual { return &Manual{name: name} }

// Name returns the name given to New.
func (m *Manual) Name() string { return m.name }

// Run implements providers.Provider.
func (m *Manual) Run(ctx context.Context, publish func(providers.Snapshot)) error {
	stop := make(chan func() error, 1)
	m.mu.Lock()
	m.runs++
	m.publish = publish
	m.stop = stop
	if m.last != nil {
		publish(*m.last)
	}
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.publish = nil
		m.stop = nil
		m.mu.Unlock()
	}()
	select {
	case <-ctx.Done():
		return nil
	case f := <-stop:
		return f()
	}
}

// Publish records s as the current snapshot and publishes it if Run is
// active. A nil s.Config is replaced by an empty configuration. It reports
// whether a Run was active.
func (m *Manual) Publish(s providers.Snapshot) bool {
	if s.Config == nil {
		s.Config = &config.Configuration{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last = &s
	if m.publish == nil {
		return false
	}
	m.publish(s)
	return true
}

// Fail makes the active Run return err. It reports whether a Run was active.
func (m *Manual) Fail(err error) bool {
	return m.end(func() error { return err })
}

// Panic makes the active Run panic with v. It reports whether a Run was
// active.
func (m *Manual) Panic(v any) bool {
	return m.end(func() error { panic(v) })
}

func (m *Manual) end(f func() error) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stop == nil {
		return false
	}
	select {
	case m.stop <- f:
		m.stop = nil
		return true
	default:
		return false
	}
}

// Runs returns how many times Run has been called.
func (m *Manual) Runs() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.runs
}

// Running reports whether a Run is active.
func (m *Manual) Running() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.publish != nil
}
