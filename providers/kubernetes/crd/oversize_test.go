package crd

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gantry-proxy/gantry/providers/kubernetes/k8s"
)

// A Secret over Kubernetes' 1 MiB limit (a TLS Secret with a huge chain,
// a basicAuth Secret with a huge user list) is dropped from the cache by
// the informer transform; each object naming it is a problem naming the
// Secret and its size, and everything else is published.
func TestOversizeSecretsDisableOnlyTheirUsers(t *testing.T) {
	in, fc, probs := load(t, "testdata/core.yaml", "testdata/http.yaml", "testdata/oversize.yaml")
	big := []byte(strings.Repeat("x", k8s.MaxSecretBytes))
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "huge-tls"}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{"tls.crt": big, "tls.key": []byte("k")}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "huge-users"}, Data: map[string][]byte{"users": big}},
	} {
		o, err := k8s.StripManagedFields(s)
		if err != nil {
			t.Fatal(err)
		}
		if len(o.(*corev1.Secret).Data) != 0 {
			t.Fatalf("secret %s kept its %d bytes in the cache", s.Name, len(big))
		}
		if err := fc.secrets.GetStore().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	snap := Translate(in, fc, Options{})
	snap.Problems = append(probs, snap.Problems...)
	wantProblem(t, snap, "TLSStore apps/big-store", "spec.defaultCertificate.secretName", "secret apps/huge-tls is 1048591 bytes, over the 1048576-byte limit")
	wantProblem(t, snap, "Middleware apps/big-auth", "spec.basicAuth.secret", "secret apps/huge-users is 1048581 bytes, over the 1048576-byte limit")
	if snap.Config.TLS.Stores["apps-big-store"] != nil || snap.Config.HTTP.Middlewares["apps-big-auth"] != nil {
		t.Error("an object naming an oversize Secret was published")
	}
	if snap.Config.HTTP.Middlewares["apps-strip"] == nil || len(snap.Config.HTTP.Routers) == 0 {
		t.Errorf("objects next to the oversize Secrets were dropped: middlewares %v, %d routers", snap.Config.HTTP.Middlewares, len(snap.Config.HTTP.Routers))
	}
}
