package certs

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"golang.org/x/crypto/ocsp"
)

// OCSP stapling pacing: a staple is refreshed halfway through its validity
// (ThisUpdate..NextUpdate), a failed fetch is retried after ocspRetry, and
// responses are bounded in size and time.
const (
	ocspRetry    = 5 * time.Minute
	ocspTimeout  = 10 * time.Second
	ocspMaxBytes = 64 << 10
	ocspIdle     = time.Hour // wake-up when nothing is due
)

// Stapler staples OCSP responses (RFC 6960, TLS "status_request", RFC 6066
// §8) to the certificates Gantry serves, from ACME and from files alike,
// as Traefik 3.5 does: for every served certificate whose leaf names an
// OCSP server and whose chain carries the issuer, it fetches a response,
// keeps it until halfway to its NextUpdate, then refreshes it; a failed
// refresh keeps the current staple until it expires. Only "good" responses
// are stapled; a revoked certificate is logged at Error.
//
// Generations register their certificates (Build); handshakes read the
// staple without locks beyond one RWMutex read. Run owns the fetching
// goroutine.
type Stapler struct {
	log    *slog.Logger
	client *http.Client
	now    func() time.Time

	mu      sync.RWMutex
	entries map[string]*ocspEntry // by leaf DER
	wake    chan struct{}
}

type ocspEntry struct {
	leaf, issuer *x509.Certificate
	staple       []byte    // current good response, nil when none
	expires      time.Time // NextUpdate of staple
	refresh      time.Time // when to fetch next
	lastErr      string
}

// NewStapler returns a Stapler; client nil means a default client with a
// 10s timeout.
func NewStapler(log *slog.Logger, client *http.Client) *Stapler {
	if client == nil {
		client = &http.Client{Timeout: ocspTimeout}
	}
	return &Stapler{log: log, client: client, now: time.Now, entries: map[string]*ocspEntry{}, wake: make(chan struct{}, 1)}
}

// register records the certificates of a new generation, and forgets the
// ones no generation serves any more.
func (s *Stapler) register(certs []*tls.Certificate) {
	keep := map[string]bool{}
	added := false
	s.mu.Lock()
	for _, c := range certs {
		if c == nil || c.Leaf == nil || len(c.Leaf.OCSPServer) == 0 || len(c.Certificate) < 2 {
			continue
		}
		key := string(c.Certificate[0])
		keep[key] = true
		if _, ok := s.entries[key]; ok {
			continue
		}
		issuer, err := x509.ParseCertificate(c.Certificate[1])
		if err != nil {
			continue
		}
		s.entries[key] = &ocspEntry{leaf: c.Leaf, issuer: issuer}
		added = true
	}
	for k := range s.entries {
		if !keep[k] {
			delete(s.entries, k)
		}
	}
	s.mu.Unlock()
	if added {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// staple returns c with its current OCSP staple, or c itself when there is
// none.
func (s *Stapler) staple(c *tls.Certificate) *tls.Certificate {
	if c == nil || len(c.Certificate) < 2 {
		return c
	}
	s.mu.RLock()
	e := s.entries[string(c.Certificate[0])]
	var st []byte
	if e != nil && e.staple != nil && s.now().Before(e.expires) {
		st = e.staple
	}
	s.mu.RUnlock()
	if st == nil {
		return c
	}
	cp := *c
	cp.OCSPStaple = st
	return &cp
}

// Run fetches and refreshes staples until ctx is done; it returns nil then.
func (s *Stapler) Run(ctx context.Context) error {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-s.wake:
		}
		next := s.refreshDue(ctx)
		t.Reset(max(next.Sub(s.now()), time.Second))
	}
}

// refreshDue fetches every due staple and returns the next due time.
func (s *Stapler) refreshDue(ctx context.Context) time.Time {
	now := s.now()
	s.mu.RLock()
	var due []*ocspEntry
	next := now.Add(ocspIdle)
	for _, e := range s.entries {
		if !now.Before(e.refresh) {
			due = append(due, e)
		} else if e.refresh.Before(next) {
			next = e.refresh
		}
	}
	s.mu.RUnlock()
	for _, e := range due {
		resp, raw, err := s.fetch(ctx, e.leaf, e.issuer)
		s.mu.Lock()
		switch {
		case err != nil:
			e.lastErr = err.Error()
			e.refresh = s.now().Add(ocspRetry)
			s.log.Warn("OCSP: fetch failed; the current staple (if any) is kept until it expires", "subject", e.leaf.Subject.String(), "serial", e.leaf.SerialNumber.Text(16), "error", err)
		case resp.Status != ocsp.Good:
			e.staple, e.lastErr = nil, fmt.Sprintf("OCSP status %d (revoked or unknown)", resp.Status)
			e.refresh = s.now().Add(ocspRetry)
			s.log.Error("OCSP: certificate is not good; nothing stapled", "subject", e.leaf.Subject.String(), "serial", e.leaf.SerialNumber.Text(16), "status", resp.Status)
		default:
			e.staple, e.expires, e.lastErr = raw, resp.NextUpdate, ""
			life := resp.NextUpdate.Sub(resp.ThisUpdate)
			e.refresh = resp.ThisUpdate.Add(life / 2)
			if resp.NextUpdate.IsZero() || !e.refresh.After(s.now()) {
				e.refresh = s.now().Add(ocspRetry)
			}
			if resp.NextUpdate.IsZero() {
				e.expires = s.now().Add(ocspRetry)
			}
		}
		if e.refresh.Before(next) {
			next = e.refresh
		}
		s.mu.Unlock()
	}
	return next
}

// fetch asks leaf's first OCSP server (HTTP POST, RFC 6960 Appendix A).
func (s *Stapler) fetch(ctx context.Context, leaf, issuer *x509.Certificate) (*ocsp.Response, []byte, error) {
	req, err := ocsp.CreateRequest(leaf, issuer, &ocsp.RequestOptions{})
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, ocspTimeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, leaf.OCSPServer[0], bytes.NewReader(req))
	if err != nil {
		return nil, nil, err
	}
	hr.Header.Set("Content-Type", "application/ocsp-request")
	hr.Header.Set("Accept", "application/ocsp-response")
	res, err := s.client.Do(hr)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("%s: %s", leaf.OCSPServer[0], res.Status)
	}
	raw, err := io.ReadAll(io.LimitReader(res.Body, ocspMaxBytes))
	if err != nil {
		return nil, nil, err
	}
	resp, err := ocsp.ParseResponseForCert(raw, leaf, issuer)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", leaf.OCSPServer[0], err)
	}
	return resp, raw, nil
}
