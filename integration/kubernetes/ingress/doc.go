// Package ingress tests providers.kubernetesIngress through the gantry
// binary against a real etcd + kube-apiserver (harness.StartKube), with
// backends on pod addresses (harness.PodIP) in the suite's own network
// namespace (harness.MainNetns). Needs scripts/setup/kubernetes.sh.
package ingress
