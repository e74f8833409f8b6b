package acme

import (
	"context"
	"errors"
	"sync"
)

// callHealth is what a remote storage (Consul, a Kubernetes Secret) says
// about its calls: Health is the last failed call, nil once one succeeds
// again. A call cancelled by its context (shutdown) changes nothing.
type callHealth struct {
	mu      sync.Mutex
	lastErr error
}

// record keeps the outcome err of one call and returns it.
func (h *callHealth) record(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastErr = err
	return err
}

// Health is the last failed call, or nil.
func (h *callHealth) Health() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lastErr
}
