package store

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// kvPrefix keeps buckets of Put apart from the configuration buckets.
const kvPrefix = "kv:"

// Get returns a copy of the value Put stored under key in bucket, or nil,
// nil when there is none. Buckets hold Gantry's own state besides the
// configuration (ACME accounts and certificates: bucket "acme"); the file
// stays mode 0600.
func (d *DB) Get(ctx context.Context, bucket, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []byte
	err := d.db.Load().View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(kvPrefix + bucket))
		if b == nil {
			return nil
		}
		if v := b.Get([]byte(key)); v != nil {
			out = append([]byte(nil), v...)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: get %s/%s: %w", bucket, key, err)
	}
	return out, nil
}

// Put stores value under key in bucket (created on first use), durably
// (bbolt syncs the file before Put returns).
func (d *DB) Put(ctx context.Context, bucket, key string, value []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := d.db.Load().Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(kvPrefix + bucket))
		if err != nil {
			return err
		}
		return b.Put([]byte(key), value)
	})
	if err != nil {
		return fmt.Errorf("store: put %s/%s: %w", bucket, key, err)
	}
	return nil
}

// Update replaces the value under key in bucket with what fn returns for
// the current value (nil when there is none), in one transaction, so
// concurrent read-modify-writes do not lose each other's changes. fn's
// error aborts the update and is returned.
func (d *DB) Update(ctx context.Context, bucket, key string, fn func(old []byte) ([]byte, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := d.db.Load().Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(kvPrefix + bucket))
		if err != nil {
			return err
		}
		var old []byte
		if v := b.Get([]byte(key)); v != nil {
			old = append([]byte(nil), v...)
		}
		nv, err := fn(old)
		if err != nil {
			return err
		}
		return b.Put([]byte(key), nv)
	})
	if err != nil {
		return fmt.Errorf("store: update %s/%s: %w", bucket, key, err)
	}
	return nil
}
