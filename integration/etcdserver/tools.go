//go:build tools

// Package tools pins etcd v3.7.3 for the Kubernetes integration tests;
// scripts/setup/kubernetes.sh builds it. A separate module so that etcd's
// grpc and otel versions never move the kube-apiserver or Gantry pins.
package tools

import _ "go.etcd.io/etcd/server/v3"
