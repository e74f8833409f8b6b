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
	return d.write(ctx, "put", bucket, key, func([]byte) ([]byte, error) { return value, nil })
}

// Update replaces the value under key in bucket with what fn returns for
// the current value (nil when there is none), in one transaction, so
// concurrent read-modify-writes do not lose each other's changes. fn's
// error aborts the update and is returned.
func (d *DB) Update(ctx context.Context, bucket, key string, fn func(old []byte) ([]byte, error)) error {
	return d.write(ctx, "update", bucket, key, func(cur []byte) ([]byte, error) {
		var old []byte
		if cur != nil {
			old = append([]byte(nil), cur...)
		}
		return fn(old)
	})
}

// write stores under key in bucket (created on first use) what value
// returns for the current value (bbolt's, valid only during the call; nil
// when there is none), in one durable transaction. op names the operation
// in the error; a done ctx writes nothing and returns ctx.Err().
func (d *DB) write(ctx context.Context, op, bucket, key string, value func(cur []byte) ([]byte, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := d.db.Load().Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(kvPrefix + bucket))
		if err != nil {
			return err
		}
		v, err := value(b.Get([]byte(key)))
		if err != nil {
			return err
		}
		return b.Put([]byte(key), v)
	})
	if err != nil {
		return fmt.Errorf("store: %s %s/%s: %w", op, bucket, key, err)
	}
	return nil
}
