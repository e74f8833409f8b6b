// Package kubedeploy tests Gantry's Kubernetes deployment against a real
// API server (integration/harness.StartKube): examples/kubernetes applies
// with kubectl and its RBAC is exactly enough; Gantry started as in a pod
// (service account token, KUBERNETES_SERVICE_HOST) routes an Ingress; two
// replicas sharing a kubernetes:// ACME storage order each certificate
// once from Pebble and serve it.
package kubedeploy
