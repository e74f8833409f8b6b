package acme

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-acme/lego/v5/acme"
	"github.com/go-acme/lego/v5/certificate"
	"github.com/go-acme/lego/v5/lego"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// run performs one order and records its outcome. With a shared store it
// first takes the domain set's lock; under it, a certificate another
// instance has just stored is taken instead of ordering, and a failure
// another instance stored is waited out instead of tried again (the
// failure and its backoff are stored for every instance).
func (m *Manager) run(ctx context.Context, r *resolver, o *order, acct *Account) {
	defer m.signal()
	names := strings.Join(domainNames(o.domain), ",")
	octx, cancel := context.WithTimeout(ctx, orderTimeout)
	defer cancel()
	key := domainKey(r.name, o.domain)
	l, _ := r.kv.(locker)
	var shared backoffStore
	if l != nil {
		held, release, err := l.Lock(octx, key)
		if err != nil {
			m.failed(ctx, r, o, err, nil)
			return
		}
		defer release()
		octx = held       // ends if the lock is lost
		m.reload(octx, r) // another instance may have just obtained it
		if m.fresh(r, o.domain) {
			m.mu.Lock()
			o.running, o.failures, o.lastErr, o.next = false, 0, "", time.Time{}
			m.inflight[r.name]--
			m.mu.Unlock()
			m.log.Info("acme: certificate obtained by another instance", "resolver", r.name, "domains", names)
			return
		}
		if bs, ok := r.kv.(backoffStore); ok {
			b, err := bs.Backoff(octx, key)
			if err != nil {
				m.failed(ctx, r, o, err, nil)
				return
			}
			m.mu.Lock()
			o.failures = max(o.failures, b.Failures)
			if b.Failures > 0 && m.now().Before(b.Next) {
				o.running, o.lastErr, o.lastErrAt, o.next = false, b.Error, b.At, b.Next
				m.inflight[r.name]--
				m.mu.Unlock()
				m.log.Info("acme: order failed on another instance; waiting its backoff", "resolver", r.name, "domains", names, "attempt", b.Failures, "nextAttempt", b.Next)
				return
			}
			m.mu.Unlock()
			shared = bs
		}
		m.mu.Lock()
		acct = m.data[r.name].Account
		m.mu.Unlock()
	}
	m.log.Info("acme: ordering certificate", "resolver", r.name, "domains", names)
	cli, err := m.client(octx, r, acct, l)
	var cert *Cert
	if err == nil {
		var res *certificate.Resource
		res, err = r.obtain(octx, cli, o.domain)
		if err == nil {
			cert = &Cert{Domain: o.domain, Certificate: res.Certificate, Key: res.PrivateKey, Store: providers.DefaultTLSName}
		}
	}
	if err == nil && len(parseHeld([]*Cert{cert}, m.log, r.name)) == 0 {
		err = errors.New("the CA returned a certificate that does not parse")
	}
	if err != nil {
		if cause := context.Cause(octx); cause != nil && ctx.Err() == nil {
			err = fmt.Errorf("%w (%w)", err, cause)
		}
		m.failed(ctx, r, o, err, shared)
		return
	}
	m.mu.Lock()
	o.running = false
	m.inflight[r.name]--
	hadFailures := o.failures > 0
	o.failures, o.lastErr, o.next = 0, "", time.Time{}
	d := m.data[r.name]
	replaced := false
	for i, c := range d.Certificates {
		if domainKey(r.name, c.Domain) == key {
			d.Certificates[i], replaced = cert, true
		}
	}
	if !replaced {
		d.Certificates = append(d.Certificates, cert)
	}
	m.held[r.name] = parseHeld(d.Certificates, m.log, r.name)
	hs := parseHeld([]*Cert{cert}, m.log, r.name)
	m.mu.Unlock()
	m.persist(ctx, r)
	if shared != nil && hadFailures {
		if err := shared.SetBackoff(context.WithoutCancel(octx), key, orderBackoff{}); err != nil {
			m.log.Warn("acme: clear the shared order backoff", "resolver", r.name, "domains", names, "error", err)
		}
	}
	m.log.Info("acme: certificate obtained", "resolver", r.name, "domains", names, "notAfter", hs[0].leaf.NotAfter, "serial", hs[0].leaf.SerialNumber.Text(16))
}

// client returns r's ACME client. When building it would create or
// register an account and the store is shared (l set), that happens under
// the resolver's account lock, after reading the account another instance
// may have just registered, and the new account is stored before the lock
// is released: instances sharing a store register one account.
func (m *Manager) client(ctx context.Context, r *resolver, acct *Account, l locker) (*lego.Client, error) {
	if l != nil && r.needsAccount(acct) {
		_, release, err := l.Lock(ctx, "account|"+r.name)
		if err != nil {
			return nil, err
		}
		defer release()
		m.reload(ctx, r)
		m.mu.Lock()
		acct = m.data[r.name].Account
		m.mu.Unlock()
	}
	cli, newAcct, changed, err := r.client(ctx, acct, m.chal, m.sharedChallenges(r), m.userAgent)
	if err == nil && changed {
		m.mu.Lock()
		m.data[r.name].Account = newAcct
		m.mu.Unlock()
		m.persist(ctx, r)
	}
	return cli, err
}

// failed records a failed order attempt (nothing when shutting down), in
// shared too when set (under the order's lock).
func (m *Manager) failed(ctx context.Context, r *resolver, o *order, err error, shared backoffStore) {
	m.mu.Lock()
	o.running = false
	m.inflight[r.name]--
	if ctx.Err() != nil { // shutting down: not a failure
		m.mu.Unlock()
		return
	}
	o.failures++
	o.lastErr, o.lastErrAt = err.Error(), m.now()
	wait := retryDelay(o.failures, err)
	o.next = m.now().Add(wait)
	b := orderBackoff{Failures: o.failures, Next: o.next, Error: o.lastErr, At: o.lastErrAt}
	gone := accountGone(err)
	var uri string
	if acct := m.data[r.name].Account; gone && acct != nil && acct.Registration != nil {
		// The CA forgot the account (a reset CA, a deleted account): drop
		// the registration so the next attempt registers the key again
		// instead of failing forever (RFC 8555 §7.3.1).
		cp := *acct
		cp.Registration, uri = nil, acct.Registration.URI
		cp.stale = uri
		m.data[r.name].Account = &cp
	}
	m.mu.Unlock()
	r.reset()
	if uri != "" {
		m.log.Warn("acme: the CA no longer knows the account: registering it again", "resolver", r.name, "account", uri)
		m.persist(ctx, r)
	}
	m.log.Warn("acme: certificate order failed", "resolver", r.name, "domains", strings.Join(domainNames(o.domain), ","), "attempt", b.Failures, "retryIn", wait.Round(time.Second), "error", err)
	if shared != nil {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := shared.SetBackoff(sctx, domainKey(r.name, o.domain), b); err != nil {
			m.log.Warn("acme: store the order backoff for the other instances", "resolver", r.name, "error", err)
		}
	}
}

// fresh reports whether the resolver holds a certificate for exactly d
// that is not due for renewal.
func (m *Manager) fresh(r *resolver, d config.Domain) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for _, h := range m.held[r.name] {
		if domainKey(r.name, h.cert.Domain) == domainKey(r.name, d) && now.Before(r.renewAt(h.leaf)) {
			return true
		}
	}
	return false
}

// retryDelay is the wait before attempt n+1 after err (see the constants).
func retryDelay(n int, err error) time.Duration {
	if rl, ok := errors.AsType[*acme.RateLimitedError](err); ok && rl.RetryAfter > 0 {
		return rl.RetryAfter
	}
	base, limit := retryCA, maxRetry
	if _, ok := errors.AsType[*acme.ProblemDetails](err); (!ok && err != nil) || accountGone(err) {
		base, limit = retryNet, maxRetryNet // not the order's fault: retried soon
	}
	d := base
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// accountGone reports whether err is the CA's accountDoesNotExist problem
// (RFC 8555 §6.7): the stored registration is no longer valid there.
func accountGone(err error) bool {
	p, ok := errors.AsType[*acme.ProblemDetails](err)
	return ok && p.Type == acme.AccountDoesNotExistErrorType
}
