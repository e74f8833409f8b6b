package acme

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/kubernetes/k8s"
)

// Lease timing: a holder renews every leaseRenew; a Lease whose holder has
// not renewed it for leaseDuration, as observed by the waiter's own clock
// (no clock comparison between replicas, as client-go's leader election),
// is taken over; waiters look every leasePoll.
const (
	leaseDuration = 15 * time.Second
	leaseRenew    = 5 * time.Second
	leasePoll     = time.Second
)

// leaseName is the Lease of lock name.
func (s *kubeStore) leaseName(name string) string { return s.name + "-lock-" + hash16(name) }

// Lock takes the Lease of name (see the package constants), blocking until
// it is free or expired, or ctx ends. The returned context ends when the
// Lease is lost (not renewed in time, or taken by another replica);
// release gives it up at once for the next waiter.
func (s *kubeStore) Lock(ctx context.Context, name string) (context.Context, func(), error) {
	leases := k8s.Leases.Client(s.c, s.ns)
	ln := s.leaseName(name)
	var seenRV string
	var seenAt time.Time
	for {
		l, err := leases.Get(ctx, ln, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
				Name: ln, Namespace: s.ns, Labels: s.labels(), Annotations: map[string]string{kubeLockAnnot: name},
			}}
			s.hold(l)
			_, err = leases.Create(ctx, l, metav1.CreateOptions{})
			if err == nil {
				s.record("", nil)
				return s.held(ctx, ln)
			}
			if apierrors.IsAlreadyExists(err) {
				continue // created meanwhile: look again
			}
			s.record("create lease "+ln, err)
		case err != nil:
			s.record("get lease "+ln, err)
		default:
			s.record("", nil)
			if l.ResourceVersion != seenRV {
				seenRV, seenAt = l.ResourceVersion, s.now()
			}
			holder := ""
			if l.Spec.HolderIdentity != nil {
				holder = *l.Spec.HolderIdentity
			}
			d := s.duration
			if l.Spec.LeaseDurationSeconds != nil && *l.Spec.LeaseDurationSeconds > 0 {
				d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
			}
			if holder == "" || holder == s.id || s.now().Sub(seenAt) >= d {
				s.hold(l)
				_, err = leases.Update(ctx, l, metav1.UpdateOptions{}) // resourceVersion precondition
				if err == nil {
					return s.held(ctx, ln)
				}
				if apierrors.IsConflict(err) {
					continue // changed meanwhile: look again
				}
				s.record("take lease "+ln, err)
			}
		}
		if !providers.Sleep(ctx, s.poll) {
			return nil, nil, fmt.Errorf("lease %s/%s for %s: %w", s.ns, ln, name, context.Cause(ctx))
		}
	}
}

// hold makes l this process's, acquired and renewed now.
func (s *kubeStore) hold(l *coordinationv1.Lease) {
	now := metav1.NewMicroTime(s.now())
	id, secs := s.id, int32(s.duration/time.Second)
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != s.id {
		n := int32(0)
		if l.Spec.LeaseTransitions != nil {
			n = *l.Spec.LeaseTransitions + 1
		}
		l.Spec.LeaseTransitions = &n
	}
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds = &id, &secs
	l.Spec.AcquireTime, l.Spec.RenewTime = &now, &now
}

// held starts renewing Lease ln and returns the holder's context and
// release.
func (s *kubeStore) held(ctx context.Context, ln string) (context.Context, func(), error) {
	hctx, lost := context.WithCancelCause(ctx)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		lastOK := s.now()
		t := time.NewTicker(s.renew)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-hctx.Done():
				return
			case <-t.C:
			}
			mine, err := s.renewLease(hctx, ln)
			switch {
			case err == nil && mine:
				lastOK = s.now()
			case err == nil:
				lost(fmt.Errorf("lease %s/%s taken by another replica", s.ns, ln))
				return
			case s.now().Sub(lastOK) >= s.duration-s.renew:
				lost(fmt.Errorf("lease %s/%s not renewed in time: %w", s.ns, ln, err))
				return
			}
		}
	})
	var once sync.Once
	release := func() {
		once.Do(func() {
			close(stop)
			wg.Wait()
			defer lost(errors.New("released"))
			if hctx.Err() != nil {
				return // lost: not ours to clear
			}
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			s.modifyLease(rctx, ln, func(l *coordinationv1.Lease) bool {
				if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != s.id {
					return false
				}
				empty := ""
				l.Spec.HolderIdentity = &empty
				return true
			})
		})
	}
	return hctx, release, nil
}

// renewLease moves RenewTime of ln to now if this process holds it.
func (s *kubeStore) renewLease(ctx context.Context, ln string) (mine bool, err error) {
	err = s.modifyLease(ctx, ln, func(l *coordinationv1.Lease) bool {
		mine = l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == s.id
		if !mine {
			return false
		}
		now := metav1.NewMicroTime(s.now())
		l.Spec.RenewTime = &now
		return true
	})
	return mine, err
}

// modifyLease reads ln, applies fn and writes it back (when fn says so)
// with the read resourceVersion as precondition, again on a conflict.
func (s *kubeStore) modifyLease(ctx context.Context, ln string, fn func(*coordinationv1.Lease) bool) error {
	leases := k8s.Leases.Client(s.c, s.ns)
	for range 20 {
		l, err := leases.Get(ctx, ln, metav1.GetOptions{})
		if err != nil {
			return s.record("get lease "+ln, err)
		}
		if !fn(l) {
			return s.record("", nil)
		}
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			continue
		}
		return s.record("update lease "+ln, err)
	}
	return s.record("update lease "+ln, errors.New("too many concurrent writers"))
}

// Backoff implements backoffStore: the failure kept on name's Lease.
func (s *kubeStore) Backoff(ctx context.Context, name string) (orderBackoff, error) {
	ln := s.leaseName(name)
	l, err := k8s.Leases.Client(s.c, s.ns).Get(ctx, ln, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return orderBackoff{}, s.record("", nil)
	}
	if err != nil {
		return orderBackoff{}, s.record("get lease "+ln, err)
	}
	s.record("", nil)
	var b orderBackoff
	if v := l.Annotations[kubeBackoffAnno]; v != "" {
		if err := json.Unmarshal([]byte(v), &b); err != nil {
			return orderBackoff{}, nil // unreadable: no backoff
		}
	}
	return b, nil
}

// SetBackoff implements backoffStore: b on name's Lease (zero b removes it).
func (s *kubeStore) SetBackoff(ctx context.Context, name string, b orderBackoff) error {
	enc, err := json.Marshal(b)
	if err != nil {
		return err
	}
	return s.modifyLease(ctx, s.leaseName(name), func(l *coordinationv1.Lease) bool {
		if b.Failures == 0 {
			if _, ok := l.Annotations[kubeBackoffAnno]; !ok {
				return false
			}
			delete(l.Annotations, kubeBackoffAnno)
			return true
		}
		if l.Annotations == nil {
			l.Annotations = map[string]string{}
		}
		l.Annotations[kubeBackoffAnno] = string(enc)
		return true
	})
}
