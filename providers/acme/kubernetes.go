package acme

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/kubernetes/k8s"
)

// kubeScheme prefixes a storage in a Kubernetes Secret:
// "kubernetes://<namespace>/<secret name>", or "kubernetes:///<secret
// name>" for the namespace Gantry runs in ($POD_NAMESPACE, else the
// service account's namespace file). The client is k8s.NewClient's with
// the endpoint, token and certAuthFilePath of providers.kubernetesCRD,
// else of providers.kubernetesIngress: in a pod, with none set, its
// service account; else $KUBECONFIG.
const kubeScheme = "kubernetes://"

// Kubernetes objects of a storage named N in namespace NS:
//   - Secret NS/N: one data key per resolver (its accounts and
//     certificates, Traefik's acme.json layout), written with
//     resourceVersion preconditions (optimistic concurrency);
//   - Secret NS/N-challenges-<hash>: one pending challenge answer each,
//     deleted when the challenge ends;
//   - Lease NS/N-lock-<hash> (coordination.k8s.io/v1): one per domain set
//     and one per resolver account; its holder orders, and its annotation
//     gantry.io/order-backoff keeps the last failure for every replica.
const (
	kubeManagedBy   = "app.kubernetes.io/managed-by"
	kubeStorageKey  = "gantry.io/acme-storage"
	kubeLockAnnot   = "gantry.io/lock"
	kubeBackoffAnno = "gantry.io/order-backoff"
	// maxSecretBytes is the API server's bound on a Secret's data
	// (k8s.io/kubernetes/pkg/apis/core.MaxSecretSize, 1 MiB).
	maxSecretBytes = 1 << 20
	// maxStorageName leaves room for the suffixes in a 253-byte name.
	maxStorageName = 200
	// kubeWatchTimeout ends each watch request server-side (re-listed).
	kubeWatchTimeout = 5 * time.Minute
	// saNamespaceFile is where a pod finds its namespace.
	saNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
)

// isDNSSubdomain reports whether s is an RFC 1123 subdomain as Kubernetes
// names objects (the length aside): dot-separated labels of a-z, 0-9 and
// '-', each starting and ending with a letter or digit. A function, not a
// regexp: nothing is compiled at start for a feature few configure.
func isDNSSubdomain(s string) bool {
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := range len(label) {
			if c := label[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
				return false
			}
		}
	}
	return true
}

// isSecretKey reports whether s is a valid Secret data key: 1 to 253 of
// a-z, A-Z, 0-9, '-', '.' and '_'.
func isSecretKey(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' && c != '.' && c != '_' {
			return false
		}
	}
	return true
}

// kubeStore keeps resolver data in a Kubernetes Secret so that several
// Gantry replicas share accounts, certificates and challenge answers, and
// serializes orders with a Lease per domain set (see Lock).
type kubeStore struct {
	c       *k8s.Client
	ns      string
	name    string
	storage string // as configured, for messages
	id      string // this process's Lease holder identity
	now     func() time.Time

	// Lease timing (leaseDuration, leaseRenew, leasePoll in production).
	duration, renew, poll time.Duration

	health callHealth // of the API calls (RBAC refusal, API server down, a Secret over its size)
}

// parseKubeStorage splits "kubernetes://[namespace]/<name>" and checks
// both names. An empty namespace is the pod's own.
func parseKubeStorage(storage string) (ns, name string, err error) {
	u, err := url.Parse(storage)
	if err != nil {
		return "", "", fmt.Errorf("storage %q: %w", storage, err)
	}
	ns, name = u.Host, strings.Trim(u.Path, "/")
	if name == "" || strings.Contains(name, "/") || u.RawQuery != "" || u.User != nil {
		return "", "", fmt.Errorf("storage %q: want kubernetes://<namespace>/<secret name> (or kubernetes:///<secret name> for Gantry's own namespace)", storage)
	}
	if ns == "" {
		ns = os.Getenv("POD_NAMESPACE")
	}
	if ns == "" {
		b, rerr := os.ReadFile(saNamespaceFile)
		if rerr != nil {
			return "", "", fmt.Errorf("storage %q: no namespace given, $POD_NAMESPACE is empty and %s is unreadable (not in a pod?): %w", storage, saNamespaceFile, rerr)
		}
		ns = strings.TrimSpace(string(b))
	}
	if len(ns) > 63 || !isDNSSubdomain(ns) || strings.Contains(ns, ".") {
		return "", "", fmt.Errorf("storage %q: namespace %q is not a valid namespace name", storage, ns)
	}
	if len(name) > maxStorageName || !isDNSSubdomain(name) {
		return "", "", fmt.Errorf("storage %q: secret name %q: want lowercase letters, digits, '-' and '.', at most %d characters", storage, name, maxStorageName)
	}
	return ns, name, nil
}

// newKubeStore returns the store of a parsed kubernetes:// storage using
// client.
func newKubeStore(client *k8s.Client, storage, ns, name string) *kubeStore {
	host, _ := os.Hostname()
	var r [4]byte
	_, _ = rand.Read(r[:])
	id := host + "_" + hex.EncodeToString(r[:])
	return &kubeStore{
		c: client, ns: ns, name: name, storage: storage, id: id, now: time.Now,
		duration: leaseDuration, renew: leaseRenew, poll: leasePoll,
	}
}

// newKubeStoreFrom parses a kubernetes:// storage and builds its client
// (see kubeScheme). It does not contact the API server.
func newKubeStoreFrom(storage string, c *static.Configuration) (*kubeStore, error) {
	ns, name, err := parseKubeStorage(storage)
	if err != nil {
		return nil, err
	}
	o := k8s.ClientOptions{UserAgent: "gantry acme storage"}
	switch p := c.Providers; {
	case p != nil && p.KubernetesCRD != nil:
		o.KubernetesAPI = p.KubernetesCRD.KubernetesAPI
	case p != nil && p.KubernetesIngress != nil:
		o.KubernetesAPI = p.KubernetesIngress.KubernetesAPI
	}
	cl, err := k8s.NewClient(o)
	if err != nil {
		return nil, fmt.Errorf("storage %q: %w", storage, err)
	}
	return newKubeStore(cl, storage, ns, name), nil
}

// String names the storage in messages.
func (s *kubeStore) String() string { return s.storage }

// record keeps the outcome of an API call for Health, naming the Secret
// and op in an error.
func (s *kubeStore) record(op string, err error) error {
	if err != nil && !errors.Is(err, context.Canceled) {
		err = fmt.Errorf("kubernetes storage %s/%s: %s: %w", s.ns, s.name, op, err)
	}
	return s.health.record(err)
}

// Health is the last failed API call (RBAC refusal, API server down, a
// Secret over its size), or nil once a call succeeds again.
func (s *kubeStore) Health() error { return s.health.Health() }

// hash16 is a short stable name part for key.
func hash16(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:8])
}

// object names the Secret and its data key holding bucket/key.
func (s *kubeStore) object(bucket, key string) (secret, dataKey string) {
	if bucket == kvBucket {
		if !isSecretKey(key) {
			key = "resolver-" + hash16(key)
		}
		return s.name, key
	}
	return s.name + "-" + bucket + "-" + hash16(key), "value"
}

func (s *kubeStore) labels() map[string]string {
	return map[string]string{kubeManagedBy: "gantry", kubeStorageKey: s.name}
}

// Get implements KV.
func (s *kubeStore) Get(ctx context.Context, bucket, key string) ([]byte, error) {
	name, dk := s.object(bucket, key)
	sec, err := k8s.Secrets.Client(s.c, s.ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, s.record("get secret "+name, nil)
	}
	if err != nil {
		return nil, s.record("get secret "+name, err)
	}
	s.record("", nil)
	return sec.Data[dk], nil
}

// Put implements KV.
func (s *kubeStore) Put(ctx context.Context, bucket, key string, v []byte) error {
	return s.Update(ctx, bucket, key, func([]byte) ([]byte, error) { return v, nil })
}

// Delete removes a key: its Secret, or its data key in the shared Secret.
func (s *kubeStore) Delete(ctx context.Context, bucket, key string) error {
	name, dk := s.object(bucket, key)
	if name != s.name {
		err := k8s.Secrets.Client(s.c, s.ns).Delete(ctx, name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			err = nil
		}
		return s.record("delete secret "+name, err)
	}
	return s.update(ctx, name, dk, func([]byte) ([]byte, error) { return nil, nil })
}

// Update implements KV: read, fn, then write with the read resourceVersion
// as precondition, again on a conflict. A Secret whose data would exceed
// 1 MiB is refused with an error naming it and the sizes.
func (s *kubeStore) Update(ctx context.Context, bucket, key string, fn func(old []byte) ([]byte, error)) error {
	name, dk := s.object(bucket, key)
	return s.update(ctx, name, dk, fn)
}

// update sets (nil: removes) data key dk of Secret name.
func (s *kubeStore) update(ctx context.Context, name, dk string, fn func(old []byte) ([]byte, error)) error {
	secrets := k8s.Secrets.Client(s.c, s.ns)
	for range 20 {
		sec, err := secrets.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			sec, err = nil, nil
		}
		if err != nil {
			return s.record("get secret "+name, err)
		}
		var old []byte
		if sec != nil {
			old = sec.Data[dk]
		}
		nv, err := fn(old)
		if err != nil {
			return err
		}
		if sec == nil {
			if nv == nil {
				return nil
			}
			sec = &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns, Labels: s.labels()},
				Type:       corev1.SecretTypeOpaque,
				Data:       map[string][]byte{dk: nv},
			}
			if err := checkSecretSize(sec, dk); err != nil {
				return s.record("write secret "+name, err)
			}
			_, err = secrets.Create(ctx, sec, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			return s.record("create secret "+name, err)
		}
		if sec.Data == nil {
			sec.Data = map[string][]byte{}
		}
		if nv == nil {
			delete(sec.Data, dk)
		} else {
			sec.Data[dk] = nv
		}
		if err := checkSecretSize(sec, dk); err != nil {
			return s.record("write secret "+name, err)
		}
		_, err = secrets.Update(ctx, sec, metav1.UpdateOptions{}) // carries the read resourceVersion
		if apierrors.IsConflict(err) {
			continue
		}
		return s.record("update secret "+name, err)
	}
	return s.record("update secret "+name, errors.New("too many concurrent writers"))
}

// errSecretTooLarge is returned (wrapped) for data over maxSecretBytes.
var errSecretTooLarge = errors.New("secret too large")

// checkSecretSize refuses what the API server would: more than 1 MiB of
// data in one Secret.
func checkSecretSize(sec *corev1.Secret, dk string) error {
	total := 0
	for _, v := range sec.Data {
		total += len(v)
	}
	if total <= maxSecretBytes {
		return nil
	}
	return fmt.Errorf("%w: %s would hold %d bytes (key %s: %d bytes), over the %d a Kubernetes Secret holds: give this resolver a storage of its own, or split its domains over several resolvers", errSecretTooLarge, sec.Name, total, dk, len(sec.Data[dk]), maxSecretBytes)
}

// Watch calls changed after its first successful read (which also ends a
// failure to read at start) and whenever another writer changes key (a
// list, then a watch from its resourceVersion, again after an error or a
// timeout), until ctx ends.
func (s *kubeStore) Watch(ctx context.Context, bucket, key string, changed func()) {
	name, dk := s.object(bucket, key)
	secrets := k8s.Secrets.Client(s.c, s.ns)
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	var last []byte
	known := false
	see := func(sec *corev1.Secret) {
		v := sec.Data[dk]
		if !known || string(v) != string(last) {
			changed()
		}
		last, known = v, true
	}
	for ctx.Err() == nil {
		list, err := secrets.List(ctx, metav1.ListOptions{FieldSelector: sel})
		if s.record("list secret "+name, err) != nil {
			providers.Sleep(ctx, watchBackoff)
			continue
		}
		for i := range list.Items {
			see(&list.Items[i])
		}
		if len(list.Items) == 0 && !known {
			see(&corev1.Secret{}) // none yet: still a first read
		}
		timeout := int64(kubeWatchTimeout / time.Second)
		w, err := secrets.Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: list.ResourceVersion, TimeoutSeconds: &timeout})
		if s.record("watch secret "+name, err) != nil {
			providers.Sleep(ctx, watchBackoff)
			continue
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				break // e.g. 410 Gone: list again
			}
			if sec, ok := ev.Object.(*corev1.Secret); ok && ev.Type != watch.Deleted {
				see(sec)
			}
		}
		w.Stop()
	}
}
