// Package ingressnginx translates Ingresses of ingress-nginx's class
// (IngressClass controller k8s.io/ingress-nginx, or the
// kubernetes.io/ingress.class annotation "nginx") and their
// nginx.ingress.kubernetes.io/ annotations into a Gantry configuration,
// the way ingress-nginx serves them, and reports per Ingress and per
// annotation whether Gantry serves it exactly, approximates it, or
// refuses it.
//
// Translate is pure: it reads Ingresses, IngressClasses and, through
// Cluster, the endpoints of Services, Secrets (TLS certificates and
// auth-secret) and ConfigMaps (custom-headers). Each path becomes two
// routers, "<ns>-<ingress>-rule-<i>-path-<j>" on the HTTP entrypoint and
// the same with "-tls" on the HTTPS one, with its service and the
// middlewares of the Ingress's annotations. The table in table.go is the
// one source of truth for the classification: the provider's problems,
// `gantry migrate ingress-nginx` and the dashboard's migration page all
// come from the Report Translate returns.
//
// Where ingress-nginx's documented behaviour and Traefik v3.7's mapping
// differ, this package follows ingress-nginx (see README, "ingress-nginx").
// Sources: ingress-nginx docs/user-guide/nginx-configuration/annotations.md,
// internal/ingress/controller/location.go and template/nginx.tmpl (v1.15);
// Traefik v3.7 pkg/provider/kubernetes/ingress-nginx.
package ingressnginx
