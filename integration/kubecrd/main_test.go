// Package kubecrd tests the kubernetesCRD provider through the real binary
// against a real etcd + kube-apiserver: the CustomResourceDefinitions of
// examples/kubernetes/crds applied with kubectl, Traefik's objects applied
// unchanged, backends on pod addresses of the suite's network namespace.
package kubecrd

import (
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

func TestMain(m *testing.M) { harness.MainNetns(m) }
