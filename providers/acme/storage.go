package acme

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-acme/lego/v5/acme"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
)

// KV is where accounts and certificates live. *store.DB satisfies it. Get
// returns nil, nil for a key never written; Update is an atomic
// read-modify-write.
type KV interface {
	Get(ctx context.Context, bucket, key string) ([]byte, error)
	Put(ctx context.Context, bucket, key string, value []byte) error
	Update(ctx context.Context, bucket, key string, fn func(old []byte) ([]byte, error)) error
}

// locker is a KV shared by several instances that serializes orders. The
// held context ends when the lock is lost (its holder could not renew it,
// or another instance took it over); release gives it up.
type locker interface {
	Lock(ctx context.Context, name string) (held context.Context, release func(), err error)
}

// backoffStore is a shared KV that keeps each order's last failure (by
// lock name), so that a failed order waits its backoff once for every
// instance rather than being tried again by each.
type backoffStore interface {
	Backoff(ctx context.Context, name string) (orderBackoff, error)
	// SetBackoff stores b; a zero Failures clears it.
	SetBackoff(ctx context.Context, name string, b orderBackoff) error
}

// orderBackoff is a failed order as kept in a shared store: consecutive
// failures, the earliest next attempt, the CA's (or network's) error and
// when it happened.
type orderBackoff struct {
	Failures int       `json:"failures"`
	Next     time.Time `json:"next"`
	Error    string    `json:"error,omitempty"`
	At       time.Time `json:"at"`
}

// sharedKV is a KV shared with other instances; challenge answers are
// published through it.
type sharedKV interface {
	KV
	deleter
	// Health is the last failed access (nil after a success); String
	// names the storage.
	Health() error
	String() string
}

// watcher is a KV that reports changes made by other instances.
type watcher interface {
	Watch(ctx context.Context, bucket, key string, changed func())
}

// deleter is a KV that can remove keys (challenge answers).
type deleter interface {
	Delete(ctx context.Context, bucket, key string) error
}

// sharedStorage reports whether storage names a store shared by several
// instances (consul:// or kubernetes://) rather than an acme.json path.
func sharedStorage(storage string) bool {
	return strings.HasPrefix(storage, consulScheme) || strings.HasPrefix(storage, kubeScheme)
}

// newSharedStore connects the shared store storage names. Errors name the
// storage option's value.
func newSharedStore(storage string, c *static.Configuration) (sharedKV, error) {
	if strings.HasPrefix(storage, kubeScheme) {
		ks, err := newKubeStoreFrom(storage, c)
		if err != nil {
			return nil, err
		}
		return ks, nil
	}
	cs, err := newConsulStore(storage, c)
	if err != nil {
		return nil, err
	}
	return cs, nil
}

// kvBucket is the KV bucket of this package; keys are resolver names.
const kvBucket = "acme"

// Data is what one resolver keeps: its account and certificates, in the
// layout of one resolver of Traefik's acme.json (byte slices are base64 in
// JSON), so an acme.json entry imports as it is.
type Data struct {
	Account      *Account `json:"Account"`
	Certificates []*Cert  `json:"Certificates"`
}

// Account is an ACME account: contact, registration and key. PrivateKey is
// DER: PKCS#1 RSA (Traefik's accounts) or PKCS#8 (Gantry's, ECDSA P-256).
type Account struct {
	Email        string        `json:"Email"`
	Registration *Registration `json:"Registration"`
	PrivateKey   []byte        `json:"PrivateKey"`
	KeyType      string        `json:"KeyType"`

	key crypto.Signer
	// stale is the registration URI the CA answered accountDoesNotExist
	// for: saving an account that has it replaces a stored account still
	// registered there (see merge).
	stale string
}

// Registration is the CA's account object and its URL (lego v4's
// registration.Resource, as Traefik stores it).
type Registration struct {
	Body acme.Account `json:"body"`
	URI  string       `json:"uri"`
}

// Cert is one certificate: the domains it was ordered for, the PEM chain,
// the PEM key, and its TLS store (always "default").
type Cert struct {
	Domain      config.Domain `json:"domain"`
	Certificate []byte        `json:"certificate"`
	Key         []byte        `json:"key"`
	Store       string        `json:"Store"`
}

// GetEmail implements registration.User.
func (a *Account) GetEmail() string { return a.Email }

// GetRegistration implements registration.User.
func (a *Account) GetRegistration() *acme.ExtendedAccount {
	if a.Registration == nil {
		return nil
	}
	return &acme.ExtendedAccount{Account: a.Registration.Body, Location: a.Registration.URI}
}

// GetPrivateKey implements registration.User.
func (a *Account) GetPrivateKey() crypto.Signer { return a.key }

// parseKey decodes PrivateKey (PKCS#1, PKCS#8 or SEC 1).
func (a *Account) parseKey() error {
	if k, err := x509.ParsePKCS1PrivateKey(a.PrivateKey); err == nil {
		a.key = k
		return nil
	}
	if k, err := x509.ParsePKCS8PrivateKey(a.PrivateKey); err == nil {
		switch s := k.(type) {
		case *rsa.PrivateKey:
			a.key = s
		case *ecdsa.PrivateKey:
			a.key = s
		default:
			return fmt.Errorf("account key: unsupported type %T", k)
		}
		return nil
	}
	k, err := x509.ParseECPrivateKey(a.PrivateKey)
	if err != nil {
		return errors.New("account key: not PKCS#1, PKCS#8 or SEC 1 DER")
	}
	a.key = k
	return nil
}

// load reads the resolver's Data from kv, or nil when there is none.
func load(ctx context.Context, kv KV, resolver string) (*Data, error) {
	b, err := kv.Get(ctx, kvBucket, resolver)
	if err != nil || b == nil {
		return nil, err
	}
	var d Data
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("stored data of resolver %s: %w", resolver, err)
	}
	return &d, d.check()
}

// save merges d into what kv holds for resolver (see merge) and returns
// the result, parsed.
func save(ctx context.Context, kv KV, resolver string, d *Data) (*Data, error) {
	var out *Data
	err := kv.Update(ctx, kvBucket, resolver, func(old []byte) ([]byte, error) {
		stored := &Data{}
		if old != nil {
			if err := json.Unmarshal(old, stored); err != nil {
				stored = &Data{} // unreadable: replaced
			}
		}
		out = merge(stored, d)
		return json.Marshal(out)
	})
	if err != nil {
		return nil, err
	}
	return out, out.check()
}

// merge combines the stored data (possibly written by another instance)
// with d: per domain set the certificate expiring last wins; the stored
// account wins when it is registered at the same CA as d's (so instances
// sharing a store converge on one account), else d's — and d's when the
// stored registration is the one the CA forgot (d.Account.stale).
func merge(stored, d *Data) *Data {
	out := &Data{Account: stored.Account}
	switch {
	case d.Account == nil:
	case out.Account == nil || out.Account.Registration == nil:
		out.Account = d.Account
	case d.Account.stale != "" && out.Account.Registration.URI == d.Account.stale:
		out.Account = d.Account // forgotten by the CA: registered again, or to be
	case d.Account.Registration != nil && !sameHost(out.Account.Registration.URI, d.Account.Registration.URI):
		out.Account = d.Account // registered at the CA now configured
	}
	byKey := map[string]int{}
	for _, c := range append(append([]*Cert(nil), stored.Certificates...), d.Certificates...) {
		if c == nil {
			continue
		}
		k := domainKey("", c.Domain)
		if i, ok := byKey[k]; ok {
			if notAfter(c).After(notAfter(out.Certificates[i])) {
				out.Certificates[i] = c
			}
			continue
		}
		byKey[k] = len(out.Certificates)
		out.Certificates = append(out.Certificates, c)
	}
	return out
}

// notAfter is the expiry of c's leaf (zero when it does not parse).
func notAfter(c *Cert) time.Time {
	b, _ := pem.Decode(c.Certificate)
	if b == nil {
		return time.Time{}
	}
	leaf, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return time.Time{}
	}
	return leaf.NotAfter
}

// check parses the account key and drops empty certificates (Traefik does
// the same when it reads acme.json).
func (d *Data) check() error {
	if d.Account != nil {
		if err := d.Account.parseKey(); err != nil {
			return err
		}
	}
	kept := d.Certificates[:0]
	for _, c := range d.Certificates {
		if c != nil && len(c.Certificate) > 0 && len(c.Key) > 0 {
			kept = append(kept, c)
		}
	}
	d.Certificates = kept
	return nil
}

// errNotFile is the error for a storage path that is not a regular file
// (a directory, a device): Gantry leaves it alone.
func errNotFile(path string, mode fs.FileMode) error {
	what := "not a regular file"
	if mode.IsDir() {
		what = "a directory"
	}
	return fmt.Errorf("%s is %s, not an acme.json file: left alone (neither read, written nor chmod'ed); remove it or point storage at a file", path, what)
}

// maxImportBytes bounds an acme.json read at import.
const maxImportBytes = 64 << 20

// importFile reads resolver's entry of a Traefik acme.json at path. It
// returns nil, nil when the file does not exist or has no such entry.
// warn is set when the file is readable by group or others (Traefik
// refuses such a file; Gantry imports it and says so).
func importFile(path, resolver string) (d *Data, warn string, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, "", err
	}
	if !st.Mode().IsRegular() {
		// Docker makes a directory of a bind-mounted path that did not
		// exist: never chmod'ed, read or written (case 054).
		return nil, "", errNotFile(path, st.Mode())
	}
	if st.Size() > maxImportBytes {
		return nil, "", fmt.Errorf("%s: larger than %d bytes", path, maxImportBytes)
	}
	if st.Mode().Perm()&0o077 != 0 {
		warn = fmt.Sprintf("%s is readable by others (mode %04o): it holds private keys", path, st.Mode().Perm())
	}
	var all map[string]*Data
	dec := json.NewDecoder(f)
	if err := dec.Decode(&all); err != nil {
		if st.Size() == 0 {
			return nil, warn, nil
		}
		return nil, warn, fmt.Errorf("%s: %w", path, err)
	}
	d = all[resolver]
	if d == nil {
		return nil, warn, nil
	}
	if err := d.check(); err != nil {
		return nil, warn, fmt.Errorf("%s: resolver %s: %w", path, resolver, err)
	}
	return d, warn, nil
}

// exportFile writes d as resolver's entry of the Traefik acme.json at path,
// keeping the other resolvers' entries, atomically (temporary file, then
// rename) and with mode 0600 whatever the old file's mode was, so going
// back to Traefik finds every certificate. Traefik reads only PKCS#1 RSA
// account keys: with Gantry's ECDSA account key it registers a new account,
// which changes nothing for the certificates.
func exportFile(path, resolver string, d *Data) error {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return errNotFile(path, st.Mode())
	}
	all := map[string]json.RawMessage{}
	if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
		if err := json.Unmarshal(b, &all); err != nil {
			return fmt.Errorf("%s: not a Traefik acme.json, left alone: %w", path, err)
		}
	}
	enc, err := json.Marshal(d)
	if err != nil {
		return err
	}
	all[resolver] = enc
	out, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".acme-*.json")
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: directory %s does not exist (create it, or mount a volume there): %w", path, filepath.Dir(path), fs.ErrNotExist)
	}
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
