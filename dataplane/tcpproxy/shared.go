package tcpproxy

import "sync"

// sharedValue is what a shared registry keeps: a pointer, compared by
// identity, that says when it may be forgotten once no holder keeps it.
type sharedValue interface {
	comparable
	// idle reports whether the value holds nothing worth keeping without
	// a holder. It is called with the registry's lock held.
	idle() bool
}

// shared keeps values by key while holders keep them, so that what one
// generation built (a TCP server's health, an inFlightConn middleware's
// counts) carries over to the next: acquire returns the value of key,
// made by create on first use, and counts one holder; the release
// function it returns uncounts that holder, once however often it is
// called. A value no holder keeps is forgotten as soon as it is idle: at
// the last release, or at a later drop. Safe for concurrent use; the zero
// value is ready.
type shared[V sharedValue] struct {
	mu sync.Mutex
	m  map[string]*holders[V]
}

// holders is a kept value and how many holders keep it.
type holders[V sharedValue] struct {
	v    V
	refs int
}

func (s *shared[V]) acquire(key string, create func() V) (V, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*holders[V]{}
	}
	h := s.m[key]
	if h == nil {
		h = &holders[V]{v: create()}
		s.m[key] = h
	}
	h.refs++
	var once sync.Once
	return h.v, func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			h.refs--
			s.forget(key, h)
		})
	}
}

// drop forgets the value of key if it is v, no holder keeps it and it is
// idle now (its last use ended after its last holder let go).
func (s *shared[V]) drop(key string, v V) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.m[key]; h != nil && h.v == v {
		s.forget(key, h)
	}
}

// forget deletes h, the entry of key, when no holder keeps it and its
// value is idle. Called with s.mu held.
func (s *shared[V]) forget(key string, h *holders[V]) {
	if h.refs <= 0 && h.v.idle() && s.m[key] == h {
		delete(s.m, key)
	}
}

// len is the number of values kept.
func (s *shared[V]) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}
