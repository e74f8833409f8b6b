//go:build tools

// Package tools pins kube-apiserver and kubectl (k8s.io/kubernetes v1.37.2)
// for the Kubernetes integration tests; scripts/setup/kubernetes.sh builds
// them. A separate module so that Kubernetes' pins never move Gantry's.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
