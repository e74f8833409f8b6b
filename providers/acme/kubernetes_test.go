package acme

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gantry-proxy/gantry/integration/harness"
	"github.com/gantry-proxy/gantry/providers/kubernetes/k8s"
)

func TestParseKubeStorage(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "pods-ns")
	for _, c := range []struct{ in, ns, name, err string }{
		{in: "kubernetes://gantry/gantry-acme", ns: "gantry", name: "gantry-acme"},
		{in: "kubernetes:///gantry-acme", ns: "pods-ns", name: "gantry-acme"},
		{in: "kubernetes://gantry/", err: "want kubernetes://<namespace>/<secret name>"},
		{in: "kubernetes://gantry/a/b", err: "want kubernetes://<namespace>/<secret name>"},
		{in: "kubernetes://Gantry/acme", err: `namespace "Gantry" is not a valid namespace name`},
		{in: "kubernetes://gantry/ACME", err: `secret name "ACME"`},
		{in: "kubernetes://gantry/" + strings.Repeat("a", 201), err: "at most 200 characters"},
	} {
		ns, name, err := parseKubeStorage(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), c.in) {
				t.Errorf("%s: error %v, want one naming the storage and containing %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || ns != c.ns || name != c.name {
			t.Errorf("%s: %q %q %v, want %q %q", c.in, ns, name, err, c.ns, c.name)
		}
	}
}

// The store against a real API server: concurrent read-modify-writes lose
// nothing (resourceVersion preconditions), data over 1 MiB is refused by
// name, a Lease is held by one store at a time, is free at once when
// released and taken over when its holder stops renewing, the backoff
// kept on it is seen by the other store, and a watch reports another
// store's write.
func TestKubeStore(t *testing.T) {
	k := harness.StartKube(t)
	ns := k.Namespace(t, "acme")
	client, err := k8s.NewClientForConfig(k.Config)
	if err != nil {
		t.Fatal(err)
	}
	newStore := func() *kubeStore {
		s := newKubeStore(client, "kubernetes://"+ns+"/gantry-acme", ns, "gantry-acme")
		s.duration, s.renew, s.poll = 3*time.Second, 500*time.Millisecond, 100*time.Millisecond
		return s
	}
	a, b := newStore(), newStore()
	if a.id == b.id {
		t.Fatalf("two stores share the holder identity %q", a.id)
	}
	ctx := t.Context()

	t.Run("concurrent updates", func(t *testing.T) {
		var wg sync.WaitGroup
		const n = 16
		for i := range n {
			s := a
			if i%2 == 1 {
				s = b
			}
			wg.Go(func() {
				err := s.Update(ctx, kvBucket, "le", func(old []byte) ([]byte, error) {
					var ids []int
					if old != nil {
						if err := json.Unmarshal(old, &ids); err != nil {
							return nil, err
						}
					}
					return json.Marshal(append(ids, i))
				})
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		v, err := b.Get(ctx, kvBucket, "le")
		if err != nil {
			t.Fatal(err)
		}
		var ids []int
		if err := json.Unmarshal(v, &ids); err != nil {
			t.Fatal(err)
		}
		slices.Sort(ids)
		if len(ids) != n || ids[0] != 0 || ids[n-1] != n-1 || len(slices.Compact(ids)) != n {
			t.Errorf("after %d concurrent updates the value holds %v: updates were lost", n, ids)
		}
	})

	t.Run("resolvers share the secret, challenges get their own", func(t *testing.T) {
		if err := a.Put(ctx, kvBucket, "other_Resolver", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := a.Put(ctx, chalBucket, "http-TOKEN_abc", []byte("answer")); err != nil {
			t.Fatal(err)
		}
		sec, err := k.Client.CoreV1().Secrets(ns).Get(ctx, "gantry-acme", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if string(sec.Data["other_Resolver"]) != "x" || sec.Data["le"] == nil || sec.Labels[kubeManagedBy] != "gantry" {
			t.Errorf("secret gantry-acme: keys %v, labels %v", slices.Sorted(maps.Keys(sec.Data)), sec.Labels)
		}
		if v, err := b.Get(ctx, chalBucket, "http-TOKEN_abc"); err != nil || string(v) != "answer" {
			t.Errorf("challenge answer read by the other store: %q %v", v, err)
		}
		if err := b.Delete(ctx, chalBucket, "http-TOKEN_abc"); err != nil {
			t.Fatal(err)
		}
		if v, err := a.Get(ctx, chalBucket, "http-TOKEN_abc"); err != nil || v != nil {
			t.Errorf("deleted challenge answer: %q %v", v, err)
		}
	})

	t.Run("over 1 MiB refused by name", func(t *testing.T) {
		big := make([]byte, maxSecretBytes)
		err := a.Put(ctx, kvBucket, "huge", big)
		if !errors.Is(err, errSecretTooLarge) || !strings.Contains(err.Error(), ns+"/gantry-acme") || !strings.Contains(err.Error(), "key huge") {
			t.Fatalf("1 MiB more in the secret: %v, want a refusal naming %s/gantry-acme and the key", err, ns)
		}
		if h := a.Health(); h == nil || !errors.Is(h, errSecretTooLarge) {
			t.Errorf("Health after the refusal: %v", h)
		}
		if v, _ := b.Get(ctx, kvBucket, "le"); v == nil {
			t.Errorf("the refused write lost the data already stored")
		}
		if h := b.Health(); h != nil {
			t.Errorf("Health of a store whose calls succeed: %v", h)
		}
	})

	t.Run("lease", func(t *testing.T) {
		held, release, err := a.Lock(ctx, "le|a.test")
		if err != nil {
			t.Fatal(err)
		}
		var bHeld atomic.Bool
		got := make(chan func(), 1)
		go func() {
			_, rel, err := b.Lock(ctx, "le|a.test")
			if err != nil {
				t.Error(err)
				got <- func() {}
				return
			}
			bHeld.Store(true)
			got <- rel
		}()
		// a keeps renewing: b must not get it in twice the lease duration.
		time.Sleep(2 * a.duration)
		if bHeld.Load() {
			t.Fatal("the lease was taken while its holder renewed it")
		}
		if held.Err() != nil {
			t.Fatalf("holder's context ended while it renewed: %v", context.Cause(held))
		}
		release()
		var relB func()
		select {
		case relB = <-got:
		case <-time.After(time.Minute):
			t.Fatal("released lease not taken by the waiter")
		}
		// b "dies": it stops renewing without releasing (its renewal
		// goroutine is ended through its parent context).
		relB()
		dctx, die := context.WithCancel(ctx)
		_, _, err = b.Lock(dctx, "le|dead.test")
		if err != nil {
			t.Fatal(err)
		}
		die()
		start := time.Now()
		lctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		_, relA, err := a.Lock(lctx, "le|dead.test")
		if err != nil {
			t.Fatalf("lease of a holder that stopped renewing not taken over: %v", err)
		}
		if waited := time.Since(start); waited < a.duration {
			t.Errorf("lease taken over after %v, before its duration %v", waited, a.duration)
		}
		relA()
	})

	t.Run("lost lease ends the holder's context", func(t *testing.T) {
		held, release, err := a.Lock(ctx, "le|lost.test")
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		leases := k.Client.CoordinationV1().Leases(ns)
		l, err := leases.Get(ctx, a.leaseName("le|lost.test"), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		other := "someone-else"
		l.Spec.HolderIdentity = &other
		if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-held.Done():
			if c := context.Cause(held); c == nil || !strings.Contains(c.Error(), "taken by another replica") {
				t.Errorf("cause %v", c)
			}
		case <-time.After(time.Minute):
			t.Fatal("the holder's context did not end when its lease was taken")
		}
		release() // not ours any more: leaves the new holder alone
		if l, err := leases.Get(ctx, a.leaseName("le|lost.test"), metav1.GetOptions{}); err != nil || *l.Spec.HolderIdentity != other {
			t.Errorf("after release the holder is %v (%v), want %s", l.Spec.HolderIdentity, err, other)
		}
	})

	t.Run("backoff on the lease", func(t *testing.T) {
		_, release, err := a.Lock(ctx, "le|fail.test")
		if err != nil {
			t.Fatal(err)
		}
		next := time.Now().Add(time.Hour).Truncate(time.Second)
		if err := a.SetBackoff(ctx, "le|fail.test", orderBackoff{Failures: 2, Next: next, Error: "urn:ietf:params:acme:error:rejectedIdentifier"}); err != nil {
			t.Fatal(err)
		}
		release()
		got, err := b.Backoff(ctx, "le|fail.test")
		if err != nil || got.Failures != 2 || !got.Next.Equal(next) || !strings.Contains(got.Error, "rejectedIdentifier") {
			t.Errorf("backoff read by the other store: %+v %v", got, err)
		}
		if err := b.SetBackoff(ctx, "le|fail.test", orderBackoff{}); err != nil {
			t.Fatal(err)
		}
		if got, err := a.Backoff(ctx, "le|fail.test"); err != nil || got.Failures != 0 {
			t.Errorf("cleared backoff: %+v %v", got, err)
		}
		if got, err := a.Backoff(ctx, "le|never.test"); err != nil || got.Failures != 0 {
			t.Errorf("backoff of a domain never ordered: %+v %v", got, err)
		}
	})

	t.Run("watch", func(t *testing.T) {
		wctx, cancel := context.WithCancel(ctx)
		changed := make(chan struct{}, 10)
		done := make(chan struct{})
		go func() {
			defer close(done)
			b.Watch(wctx, kvBucket, "le", func() { changed <- struct{}{} })
		}()
		defer func() { cancel(); <-done }()
		// Writes until the watch (started asynchronously) reports one.
		harness.Try(t, time.Minute, func() error {
			if err := a.Put(ctx, kvBucket, "le", fmt.Appendf(nil, "[%d]", time.Now().UnixNano())); err != nil {
				return err
			}
			select {
			case <-changed:
				return nil
			case <-time.After(time.Second):
				return errors.New("no change reported")
			}
		})
		// The loop above may have written more than once (a report slower
		// than its second): wait for the reports to stop.
		quiet := func() int {
			n := 0
			for {
				select {
				case <-changed:
					n++
				case <-time.After(2 * time.Second):
					return n
				}
			}
		}
		quiet()
		// A write to another resolver's key is not a change of "le".
		if err := a.Put(ctx, kvBucket, "other_Resolver", []byte("y")); err != nil {
			t.Fatal(err)
		}
		if n := quiet(); n != 0 {
			t.Errorf("a write of another resolver's key reported %d changes of le", n)
		}
		if err := a.Put(ctx, kvBucket, "le", []byte("[1]")); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changed:
		case <-time.After(time.Minute):
			t.Fatal("no change reported")
		}
		time.Sleep(time.Second)
		if n := len(changed); n != 0 {
			t.Errorf("%d extra change reports for one write of le", n)
		}
	})
}

// isDNSSubdomain and isSecretKey accept what Kubernetes' patterns accept.
func TestKubeNamePatterns(t *testing.T) {
	subdomain := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	key := regexp.MustCompile(`^[-._a-zA-Z0-9]{1,253}$`)
	for _, s := range []string{"", "a", "A", "-", "a-", "-a", "a-b", "a.b", "a..b", ".a", "a.", "gantry-acme", "acme.json", "x_y", "1", "a.b-c.d9",
		"é", "a b", "a/b", "tls.crt", "UPPER", strings.Repeat("k", 253), strings.Repeat("k", 254), "a\n", "a\x00"} {
		if got, want := isDNSSubdomain(s), subdomain.MatchString(s); got != want {
			t.Errorf("isDNSSubdomain(%q) = %v, want %v", s, got, want)
		}
		if got, want := isSecretKey(s), key.MatchString(s); got != want {
			t.Errorf("isSecretKey(%q) = %v, want %v", s, got, want)
		}
	}
}
