package acme

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
)

// consulScheme prefixes a storage in Consul KV:
// "consul://[host:port]/<key prefix>", e.g. "consul:///gantry/acme" (the
// first providers.consul endpoint, else CONSUL_HTTP_ADDR, else
// 127.0.0.1:8500; token from providers.consul.token or CONSUL_HTTP_TOKEN).
const consulScheme = "consul://"

// Lock timing in Consul: a session lives sessionTTL past its holder's last
// renewal (Consul may take up to twice as long to expire it), then its
// locks are free again after lockDelay.
const (
	sessionTTL   = "10s"
	lockDelay    = time.Second
	lockWait     = 5 * time.Second
	watchWait    = 30 * time.Second
	watchBackoff = 2 * time.Second
)

// consulStore keeps resolver data in Consul KV under prefix, so several
// Gantry instances share accounts, certificates and challenge answers, and
// serializes orders with Consul session locks (exactly one instance orders
// or renews a domain; the others wait and pick its result up).
type consulStore struct {
	c      *api.Client
	addr   string
	prefix string

	callHealth // of the Consul calls
}

// newConsulStore parses a consul:// storage and builds the client.
func newConsulStore(storage string, c *static.Configuration) (*consulStore, error) {
	u, err := url.Parse(storage)
	if err != nil {
		return nil, fmt.Errorf("storage %q: %w", storage, err)
	}
	prefix := strings.Trim(u.Path, "/")
	if prefix == "" {
		return nil, fmt.Errorf("storage %q: want consul://[host:port]/<key prefix>", storage)
	}
	cfg := api.DefaultNonPooledConfig()
	if p := c.Providers; p != nil && p.Consul != nil {
		if len(p.Consul.Endpoints) > 0 {
			cfg.Address = p.Consul.Endpoints[0]
		}
		if p.Consul.Token != "" {
			cfg.Token = p.Consul.Token
		}
	}
	if u.Host != "" {
		cfg.Address = u.Host
	}
	if t := os.Getenv("CONSUL_HTTP_TOKEN"); t != "" && cfg.Token == "" {
		cfg.Token = t
	}
	cl, err := api.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("storage %q: %w", storage, err)
	}
	return &consulStore{c: cl, addr: cfg.Address, prefix: prefix}, nil
}

func (s *consulStore) key(bucket, key string) string { return s.prefix + "/" + bucket + "/" + key }

// Get implements KV.
func (s *consulStore) Get(ctx context.Context, bucket, key string) ([]byte, error) {
	p, _, err := s.c.KV().Get(s.key(bucket, key), (&api.QueryOptions{RequireConsistent: true}).WithContext(ctx))
	if s.record(err) != nil || p == nil {
		return nil, err
	}
	return p.Value, nil
}

// Put implements KV.
func (s *consulStore) Put(ctx context.Context, bucket, key string, v []byte) error {
	_, err := s.c.KV().Put(&api.KVPair{Key: s.key(bucket, key), Value: v}, (&api.WriteOptions{}).WithContext(ctx))
	return s.record(err)
}

// Delete removes a key.
func (s *consulStore) Delete(ctx context.Context, bucket, key string) error {
	_, err := s.c.KV().Delete(s.key(bucket, key), (&api.WriteOptions{}).WithContext(ctx))
	return s.record(err)
}

// Update implements KV with check-and-set, retried on a concurrent write.
func (s *consulStore) Update(ctx context.Context, bucket, key string, fn func(old []byte) ([]byte, error)) error {
	k := s.key(bucket, key)
	for range 20 {
		p, _, err := s.c.KV().Get(k, (&api.QueryOptions{RequireConsistent: true}).WithContext(ctx))
		if err != nil {
			return s.record(err)
		}
		var old []byte
		var idx uint64
		if p != nil {
			old, idx = p.Value, p.ModifyIndex
		}
		nv, err := fn(old)
		if err != nil {
			return err
		}
		ok, _, err := s.c.KV().CAS(&api.KVPair{Key: k, Value: nv, ModifyIndex: idx}, (&api.WriteOptions{}).WithContext(ctx))
		if s.record(err) != nil {
			return err
		}
		if ok {
			return nil
		}
	}
	return errors.New("consul: update " + k + ": too many concurrent writers")
}

// Lock takes the Consul lock name (a session lock with a 10s TTL, renewed
// while held), blocking until it is free or ctx ends. The held context
// ends when Consul reports the lock lost; release gives it up. A holder
// that dies loses it when its session expires.
func (s *consulStore) Lock(ctx context.Context, name string) (context.Context, func(), error) {
	l, err := s.c.LockOpts(&api.LockOptions{
		Key: s.lockKey("locks", name), Value: []byte(name),
		SessionName: "gantry-acme", SessionTTL: sessionTTL, LockDelay: lockDelay, LockWaitTime: lockWait, MonitorRetries: 3,
	})
	if err != nil {
		return nil, nil, s.record(err)
	}
	lost, err := l.Lock(ctx.Done())
	if err != nil {
		return nil, nil, s.record(fmt.Errorf("consul lock %s: %w", name, err))
	}
	s.record(nil)
	if lost == nil {
		return nil, nil, fmt.Errorf("consul lock %s: %w", name, context.Cause(ctx))
	}
	held, cancel := context.WithCancelCause(ctx)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-lost:
			cancel(fmt.Errorf("consul lock %s lost", name))
		case <-stop:
		}
	})
	var once sync.Once
	return held, func() {
		once.Do(func() {
			close(stop)
			wg.Wait()
			cancel(errors.New("released"))
			_ = l.Unlock()
		})
	}, nil
}

// lockKey is the key of name under dir ("locks", "orders").
func (s *consulStore) lockKey(dir, name string) string {
	sum := sha256.Sum256([]byte(name))
	return s.prefix + "/" + dir + "/" + hex.EncodeToString(sum[:12])
}

// Backoff implements backoffStore (key <prefix>/orders/<hash of name>).
func (s *consulStore) Backoff(ctx context.Context, name string) (orderBackoff, error) {
	p, _, err := s.c.KV().Get(s.lockKey("orders", name), (&api.QueryOptions{RequireConsistent: true}).WithContext(ctx))
	if s.record(err) != nil || p == nil {
		return orderBackoff{}, err
	}
	var b orderBackoff
	if json.Unmarshal(p.Value, &b) != nil {
		return orderBackoff{}, nil // unreadable: no backoff
	}
	return b, nil
}

// SetBackoff implements backoffStore.
func (s *consulStore) SetBackoff(ctx context.Context, name string, b orderBackoff) error {
	k := s.lockKey("orders", name)
	if b.Failures == 0 {
		_, err := s.c.KV().Delete(k, (&api.WriteOptions{}).WithContext(ctx))
		return s.record(err)
	}
	enc, err := json.Marshal(b)
	if err != nil {
		return err
	}
	_, err = s.c.KV().Put(&api.KVPair{Key: k, Value: enc}, (&api.WriteOptions{}).WithContext(ctx))
	return s.record(err)
}

// String names the storage in messages.
func (s *consulStore) String() string { return "consul://" + s.addr + "/" + s.prefix }

// Watch calls changed whenever the key changes (a Consul blocking query),
// until ctx ends.
func (s *consulStore) Watch(ctx context.Context, bucket, key string, changed func()) {
	k := s.key(bucket, key)
	var idx uint64
	for ctx.Err() == nil {
		p, meta, err := s.c.KV().Get(k, (&api.QueryOptions{WaitIndex: idx, WaitTime: watchWait}).WithContext(ctx))
		if s.record(err) != nil {
			if !providers.Sleep(ctx, watchBackoff) {
				return
			}
			continue
		}
		if meta.LastIndex < idx { // index reset (e.g. snapshot restore)
			idx = 0
			continue
		}
		if meta.LastIndex != idx && idx != 0 && p != nil {
			changed()
		}
		idx = meta.LastIndex
	}
}
