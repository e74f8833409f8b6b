package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// DefaultHistory is how many revisions are kept when Open gets history <= 0.
const DefaultHistory = 100

// lockTimeout bounds the wait for the file lock held by another process.
const lockTimeout = 2 * time.Second

// ErrNotFound is returned by LastGood when no configuration was ever saved,
// and by Revision for an unknown version.
var ErrNotFound = errors.New("store: not found")

var (
	bucketRevisions = []byte("revisions") // seq (uint64 BE) -> zstd(JSON record)
	bucketVersions  = []byte("versions")  // version -> seq
)

// record is what one revision stores.
type record struct {
	At     time.Time         `json:"at"`
	Merged *providers.Merged `json:"merged"`
	Counts *Counts           `json:"counts,omitempty"`
}

// Counts are the figures of an applied configuration as the dashboard's
// overview shows them (dashboard.Counts): HTTP routers, services and
// middlewares including the internal ones, and the problems of the
// configuration (the providers' and the compiled table's).
type Counts struct {
	Routers     int `json:"routers"`
	Services    int `json:"services"`
	Middlewares int `json:"middlewares"`
	Problems    int `json:"problems"`
}

// Revision is one application of a configuration: a version applied again
// later (A, B, C, B) is a new revision with its own Seq.
type Revision struct {
	// Seq numbers the applications, increasing (the oldest kept need not
	// be 1: older ones are trimmed).
	Seq uint64 `json:"seq"`
	// Version is the Merged Version (hex SHA-256 of the canonical config).
	Version string `json:"version"`
	// At is when the configuration was applied.
	At time.Time `json:"at"`
	// Sources is the per-provider state at that time.
	Sources  map[string]providers.SourceState `json:"sources,omitempty"`
	Problems []providers.Problem              `json:"problems,omitempty"`
	Config   *config.Configuration            `json:"config"`
	// Routers, Services and Middlewares count the HTTP objects of Config.
	Routers     int `json:"routers"`
	Services    int `json:"services"`
	Middlewares int `json:"middlewares"`
	// Counts are the figures given to SaveApplied; nil when none were.
	Counts *Counts `json:"counts,omitempty"`
}

// DB is the bbolt-backed store. Create it with Open; it is safe for
// concurrent use.
type DB struct {
	db      atomic.Pointer[bolt.DB] // swapped by Resume
	path    string
	history int
	log     *slog.Logger
	warning string
	enc     *zstd.Encoder
	dec     *zstd.Decoder
}

// Open opens (creating it and its directory if needed) the database at path,
// keeping at most history revisions (DefaultHistory when history <= 0).
//
// A file that is not a readable bbolt database is renamed to
// path+".corrupt-<UTC time>" and a fresh database is created: the error is
// then nil and Warning describes what happened. Open returns an error when
// the directory cannot be created, when another process holds the file
// lock for longer than 2s, or when the bad file cannot be moved aside.
func Open(path string, history int, log *slog.Logger) (*DB, error) {
	if history <= 0 {
		history = DefaultHistory
	}
	// The store holds the whole dynamic configuration in clear (basic auth
	// hashes, TLS private keys given inline, header values, provider
	// credentials): a directory Gantry creates is 0700, the file 0600, and
	// a file others can read or write is refused.
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: create directory for %s: %w", path, err)
	}
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o007 != 0 {
		return nil, fmt.Errorf("store: %s is accessible to other users (mode %04o) and holds every secret of the configuration in clear; refusing to use it: run chmod 600 %s", path, st.Mode().Perm(), path)
	} else if err == nil && st.Mode().Perm()&0o070 != 0 {
		log.Warn("store is accessible to its group; it holds every secret of the configuration in clear (chmod 600 it unless the group is trusted)", "path", path, "mode", fmt.Sprintf("%04o", st.Mode().Perm()))
	}
	d := &DB{path: path, history: history, log: log}
	var err error
	if d.enc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest)); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if d.dec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0)); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	db, err := openChecked(path)
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("store: open %s: file is locked by another process: %w", path, err)
	}
	if err != nil {
		aside := fmt.Sprintf("%s.corrupt-%s", path, time.Now().UTC().Format("20060102T150405Z"))
		if rerr := os.Rename(path, aside); rerr != nil {
			return nil, fmt.Errorf("store: open %s: %w (and moving it aside failed: %w)", path, err, rerr)
		}
		d.warning = fmt.Sprintf("database %s could not be read (%v); moved to %s and started empty", path, err, aside)
		log.Error("store unreadable; moved aside, starting with an empty store", "path", path, "moved_to", aside, "error", err)
		if db, err = openChecked(path); err != nil {
			return nil, fmt.Errorf("store: open fresh %s: %w", path, err)
		}
	}
	d.db.Store(db)
	return d, nil
}

// openChecked opens path and makes sure its buckets exist, turning a panic
// of bbolt on a damaged file into an error.
func openChecked(path string) (db *bolt.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			if db != nil {
				db.Close()
			}
			db, err = nil, fmt.Errorf("damaged database: %v", r)
		}
	}()
	db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout})
	if err != nil {
		return nil, err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketRevisions, bucketVersions} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// Warning returns a description of a problem Open recovered from (the
// database moved aside), or "".
func (d *DB) Warning() string { return d.warning }

// Suspend closes the database file, releasing its lock, so that another
// process (the new binary of an upgrade) can open it; until Resume every
// read and write fails with bbolt's "database not open". The old process
// keeps serving its configuration meanwhile.
func (d *DB) Suspend() error {
	if err := d.db.Load().Close(); err != nil {
		return fmt.Errorf("store: close %s: %w", d.path, err)
	}
	return nil
}

// Resume reopens the database after Suspend (the upgrade failed). It fails
// when another process holds the lock for longer than 2s.
func (d *DB) Resume() error {
	db, err := openChecked(d.path)
	if err != nil {
		return fmt.Errorf("store: reopen %s: %w", d.path, err)
	}
	d.db.Store(db)
	return nil
}

// Path returns the database file path.
func (d *DB) Path() string { return d.path }

// Close closes the database.
func (d *DB) Close() error {
	d.dec.Close()
	d.enc.Close()
	if err := d.db.Load().Close(); err != nil {
		return fmt.Errorf("store: close %s: %w", d.path, err)
	}
	return nil
}

func seqKey(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

// SaveApplied records m, applied at time at, with its figures (nil: none),
// as the newest revision. Saving the Version of the newest revision again
// is a no-op. Revisions beyond the
// history bound are deleted, oldest first. Errors come from bbolt or from
// encoding m.
func (d *DB) SaveApplied(ctx context.Context, m *providers.Merged, at time.Time, counts *Counts) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if m == nil || m.Config == nil {
		return errors.New("store: save: nil configuration")
	}
	js, err := json.Marshal(record{At: at, Merged: m, Counts: counts})
	if err != nil {
		return fmt.Errorf("store: encode revision %s: %w", m.Version, err)
	}
	val := d.enc.EncodeAll(js, nil)
	err = d.db.Load().Update(func(tx *bolt.Tx) error {
		revs, vers := tx.Bucket(bucketRevisions), tx.Bucket(bucketVersions)
		if k, _ := revs.Cursor().Last(); k != nil {
			if cur := vers.Get([]byte(m.Version)); cur != nil && string(cur) == string(k) {
				return nil // newest revision already has this version
			}
		}
		seq, err := revs.NextSequence()
		if err != nil {
			return err
		}
		key := seqKey(seq)
		if err := revs.Put(key, val); err != nil {
			return err
		}
		if err := vers.Put([]byte(m.Version), key); err != nil {
			return err
		}
		return trim(revs, vers, d.history)
	})
	if err != nil {
		return fmt.Errorf("store: save revision %s: %w", m.Version, err)
	}
	return nil
}

// trim deletes the oldest revisions until at most keep remain.
func trim(revs, vers *bolt.Bucket, keep int) error {
	n := 0
	c := revs.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		n++
	}
	if n <= keep {
		return nil
	}
	var old [][]byte
	for k, _ := c.First(); k != nil && len(old) < n-keep; k, _ = c.Next() {
		old = append(old, k)
	}
	for _, k := range old {
		if err := revs.Delete(k); err != nil {
			return err
		}
	}
	// Drop index entries pointing at deleted revisions.
	var stale [][]byte
	err := vers.ForEach(func(v, k []byte) error {
		if revs.Get(k) == nil {
			stale = append(stale, v)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, v := range stale {
		if err := vers.Delete(v); err != nil {
			return err
		}
	}
	return nil
}

func (d *DB) decode(key, val []byte) (*Revision, *providers.Merged, error) {
	js, err := d.dec.DecodeAll(val, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("store: revision %d: decompress: %w", binary.BigEndian.Uint64(key), err)
	}
	var r record
	if err := json.Unmarshal(js, &r); err != nil {
		return nil, nil, fmt.Errorf("store: revision %d: decode: %w", binary.BigEndian.Uint64(key), err)
	}
	if r.Merged == nil || r.Merged.Config == nil {
		return nil, nil, fmt.Errorf("store: revision %d: no configuration", binary.BigEndian.Uint64(key))
	}
	m := r.Merged
	rev := &Revision{Seq: binary.BigEndian.Uint64(key), Version: m.Version, At: r.At, Sources: m.Sources, Problems: m.Problems, Config: m.Config, Counts: r.Counts}
	if h := m.Config.HTTP; h != nil {
		rev.Routers, rev.Services, rev.Middlewares = len(h.Routers), len(h.Services), len(h.Middlewares)
	}
	return rev, m, nil
}

// LastGood returns the newest saved configuration, skipping (and logging)
// revisions that no longer decode. It returns ErrNotFound when there is
// none.
func (d *DB) LastGood(ctx context.Context) (*providers.Merged, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out *providers.Merged
	err := d.db.Load().View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketRevisions).Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			_, m, err := d.decode(k, v)
			if err != nil {
				d.log.Warn("skipping unreadable stored revision", "path", d.path, "error", err)
				continue
			}
			out = m
			return nil
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: read %s: %w", d.path, err)
	}
	if out == nil {
		return nil, ErrNotFound
	}
	return out, nil
}

// History returns up to limit revisions (all when limit <= 0), newest first,
// skipping revisions that no longer decode.
func (d *DB) History(ctx context.Context, limit int) ([]Revision, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []Revision
	err := d.db.Load().View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketRevisions).Cursor()
		for k, v := c.Last(); k != nil && (limit <= 0 || len(out) < limit); k, v = c.Prev() {
			r, _, err := d.decode(k, v)
			if err != nil {
				d.log.Warn("skipping unreadable stored revision", "path", d.path, "error", err)
				continue
			}
			out = append(out, *r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: read %s: %w", d.path, err)
	}
	return out, nil
}

// Revision returns the newest revision with the given version, or
// ErrNotFound.
func (d *DB) Revision(ctx context.Context, version string) (*Revision, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out *Revision
	err := d.db.Load().View(func(tx *bolt.Tx) error {
		k := tx.Bucket(bucketVersions).Get([]byte(version))
		if k == nil {
			return ErrNotFound
		}
		v := tx.Bucket(bucketRevisions).Get(k)
		if v == nil {
			return ErrNotFound
		}
		r, _, err := d.decode(k, v)
		out = r
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("store: revision %s: %w", version, err)
	}
	return out, nil
}
