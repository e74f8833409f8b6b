package crd

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/kubernetes/k8s"
	yaml "go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// fakeCluster serves core objects read from a manifest, through the
// same listers and k8s.Backends the provider uses (informers never started,
// their stores filled by hand).
type fakeCluster struct {
	services, slices, secrets cache.SharedIndexInformer
	configMaps                map[string]any
	backends                  k8s.Backends
}

func newFakeCluster(t *testing.T) *fakeCluster {
	fc := &fakeCluster{
		services:   cache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.Service{}, 0, cache.Indexers{}),
		slices:     cache.NewSharedIndexInformer(&cache.ListWatch{}, &discoveryv1.EndpointSlice{}, 0, cache.Indexers{}),
		secrets:    cache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.Secret{}, 0, cache.Indexers{}),
		configMaps: map[string]any{},
	}
	// The Watcher adds the service-name index Backends reads slices by.
	if err := k8s.NewWatcher("test", nil, 0, nil).WatchEndpointSlices(fc.slices); err != nil {
		t.Fatal(err)
	}
	fc.backends = k8s.Backends{
		Services: k8s.NewLister[*corev1.Service](fc.services),
		Slices:   k8s.NewLister[*discoveryv1.EndpointSlice](fc.slices),
	}
	return fc
}

func (f *fakeCluster) Resolve(ns, name string, port k8s.PortRef, nativeLB bool) (k8s.Target, error) {
	return f.backends.Resolve(ns, name, port, nativeLB)
}

func (f *fakeCluster) Secrets() k8s.Lister[*corev1.Secret] {
	return k8s.NewLister[*corev1.Secret](f.secrets)
}

func (f *fakeCluster) ConfigMap(ns, name string) (*corev1.ConfigMap, bool) {
	c, ok := f.configMaps[ns+"/"+name].(*corev1.ConfigMap)
	return c, ok
}

// load reads a multi-document manifest: core objects go into the fake
// cluster, traefik.io objects are decoded with Decode.
func load(t *testing.T, files ...string) (*Input, *fakeCluster, []providers.Problem) {
	t.Helper()
	fc := newFakeCluster(t)
	crs := map[string][]*unstructured.Unstructured{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var doc map[string]any
			if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if doc == nil {
				continue
			}
			raw, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(raw); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if u.GetNamespace() == "" {
				u.SetNamespace("default")
			}
			key := u.GetNamespace() + "/" + u.GetName()
			into := func(v any) {
				b, _ := json.Marshal(u.Object)
				if err := json.Unmarshal(b, v); err != nil {
					t.Fatalf("%s %s: %v", u.GetKind(), key, err)
				}
			}
			switch u.GetKind() {
			case "Service":
				var s corev1.Service
				into(&s)
				if err := fc.services.GetStore().Add(&s); err != nil {
					t.Fatal(err)
				}
			case "EndpointSlice":
				var s discoveryv1.EndpointSlice
				into(&s)
				if err := fc.slices.GetStore().Add(&s); err != nil {
					t.Fatal(err)
				}
			case "Secret":
				var s corev1.Secret
				into(&s)
				if s.Data == nil {
					s.Data = map[string][]byte{}
				}
				for k, v := range s.StringData {
					s.Data[k] = []byte(v)
				}
				if err := fc.secrets.GetStore().Add(&s); err != nil {
					t.Fatal(err)
				}
			case "ConfigMap":
				var c corev1.ConfigMap
				into(&c)
				fc.configMaps[key] = &c
			default:
				crs[u.GetKind()] = append(crs[u.GetKind()], u)
			}
		}
	}
	in, probs := Decode(crs)
	return in, fc, probs
}

// translate loads files and translates them with opts.
func translate(t *testing.T, opts Options, files ...string) providers.Snapshot {
	t.Helper()
	in, fc, probs := load(t, files...)
	fc.backends.AllowExternalName = opts.AllowExternalNameServices
	snap := Translate(in, fc, opts)
	snap.Problems = append(probs, snap.Problems...)
	return snap
}

// problemsFor returns the problems whose Source is src.
func problemsFor(snap providers.Snapshot, src string) []providers.Problem {
	var out []providers.Problem
	for _, p := range snap.Problems {
		if p.Source == src {
			out = append(out, p)
		}
	}
	return out
}
