package main

import (
	"os/exec"
	"strings"
	"testing"
)

// linked returns the packages gantry links (go list -deps) that are, or
// lie under, one of prefixes: each forbidden prefix at most once.
func linked(t *testing.T, prefixes ...string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), out)
	}
	var found []string
	for _, p := range prefixes {
		for _, d := range deps {
			if d == p || strings.HasPrefix(d, p) {
				found = append(found, d)
				break
			}
		}
	}
	return found
}

// What gantry links initialises at every start, configured or not (each
// package's init runs and touches its pages of the binary). Code that
// only some configurations use and that pulls in heavy SDKs stays out of
// the binary: lego's DNS-01 providers and the cloud SDKs they bring run in
// gantry-dns (package dnshelper).
func TestBinaryLinksNoDNSProviders(t *testing.T) {
	for _, d := range linked(t, "github.com/gantry-proxy/gantry/providers/acme/dnsproviders",
		"github.com/go-acme/lego/v5/providers/dns/",
		"github.com/aws/aws-sdk-go-v2/",
		"cloud.google.com/go/",
		"google.golang.org/api/",
		"github.com/baidubce/") {
		t.Errorf("cmd/gantry links %s: it belongs in cmd/gantry-dns", d)
	}
}

// The Kubernetes providers read a few kinds through a minimal scheme
// (providers/kubernetes/k8s): client-go's kubernetes/scheme registers
// every built-in API group at init (all of k8s.io/api), and the typed
// clientsets, informer factories and discovery client import it; gentype
// imports client-go's fake-client machinery (client-go/testing,
// structured-merge-diff's typed schemas, OpenAPI models).
func TestBinaryLinksNoKubernetesClientsets(t *testing.T) {
	for _, d := range linked(t, "k8s.io/client-go/kubernetes",
		"k8s.io/client-go/informers",
		"k8s.io/client-go/listers/",
		"k8s.io/client-go/discovery",
		"sigs.k8s.io/gateway-api/pkg/client/",
		"k8s.io/client-go/gentype",
		"k8s.io/client-go/testing",
		"sigs.k8s.io/structured-merge-diff/v6/typed",
		"k8s.io/kube-openapi/pkg/util/proto",
		"github.com/google/gnostic-models/") {
		t.Errorf("cmd/gantry links %s: the Kubernetes providers read through k8s.Kind and k8s.Informers", d)
	}
}

// The Docker provider speaks the Engine API through its own small client
// (providers/docker/engineapi): the official client and its dependencies
// (distribution/reference, OpenTelemetry's HTTP instrumentation, ...)
// allocated at init in every gantry process, Docker configured or not.
func TestBinaryLinksNoDockerClient(t *testing.T) {
	for _, d := range linked(t, "github.com/docker/docker/",
		"github.com/docker/go-connections/",
		"github.com/distribution/reference",
		"github.com/opencontainers/") {
		t.Errorf("cmd/gantry links %s: the Docker provider reads through providers/docker/engineapi", d)
	}
}
