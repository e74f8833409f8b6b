package crd

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/gantry-proxy/gantry/providers"
	yaml "go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fakeCluster serves core objects read from a manifest.
type fakeCluster struct {
	services   map[string]*corev1.Service
	slices     map[string][]*discoveryv1.EndpointSlice
	secrets    map[string]*corev1.Secret
	configMaps map[string]*corev1.ConfigMap
}

func (f *fakeCluster) Service(ns, name string) (*corev1.Service, bool) {
	s, ok := f.services[ns+"/"+name]
	return s, ok
}

func (f *fakeCluster) EndpointSlices(ns, svc string) []*discoveryv1.EndpointSlice {
	return f.slices[ns+"/"+svc]
}

func (f *fakeCluster) Secret(ns, name string) (*corev1.Secret, bool) {
	s, ok := f.secrets[ns+"/"+name]
	return s, ok
}

func (f *fakeCluster) ConfigMap(ns, name string) (*corev1.ConfigMap, bool) {
	c, ok := f.configMaps[ns+"/"+name]
	return c, ok
}

// load reads a multi-document manifest: core objects go into the fake
// cluster, traefik.io objects are decoded with Decode.
func load(t *testing.T, files ...string) (*Input, *fakeCluster, []providers.Problem) {
	t.Helper()
	fc := &fakeCluster{
		services: map[string]*corev1.Service{}, slices: map[string][]*discoveryv1.EndpointSlice{},
		secrets: map[string]*corev1.Secret{}, configMaps: map[string]*corev1.ConfigMap{},
	}
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
				fc.services[key] = &s
			case "EndpointSlice":
				var s discoveryv1.EndpointSlice
				into(&s)
				svc := s.Labels[discoveryv1.LabelServiceName]
				fc.slices[s.Namespace+"/"+svc] = append(fc.slices[s.Namespace+"/"+svc], &s)
			case "Secret":
				var s corev1.Secret
				into(&s)
				if s.Data == nil {
					s.Data = map[string][]byte{}
				}
				for k, v := range s.StringData {
					s.Data[k] = []byte(v)
				}
				fc.secrets[key] = &s
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
