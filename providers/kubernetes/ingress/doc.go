// Package ingress is providers.kubernetesIngress: networking.k8s.io/v1
// Ingresses of Traefik's class served by Gantry, as Traefik v3.7 serves
// them (pkg/provider/kubernetes/ingress; read, not copied). Objects are
// named as Traefik names them, under provider "kubernetes"
// ("default-whoami-80@kubernetes").
//
// Selection: IngressClasses of controller traefik.io/ingress-controller
// (only the one named ingressClass when set); an Ingress is served when
// spec.ingressClassName names one of them, else when its legacy
// kubernetes.io/ingress.class annotation equals ingressClass ("traefik"
// when unset), else, without class or annotation, when ingressClass is
// unset or one of those IngressClasses is the cluster default
// (ingressclass.kubernetes.io/is-default-class). labelSelector and
// namespaces narrow what is read.
//
// Translation, per Ingress: router.* annotations (entrypoints,
// middlewares as written — "ns-name@kubernetescrd" for a CRD middleware —,
// priority, rulesyntax, pathmatcher, tls, tls.certresolver,
// tls.domains.n.main/sans, tls.options, observability.*) apply to each of
// its routers; a bad annotation leaves the Ingress out with a problem. Each
// path is a router "<ns>-<ingress>-<host><path>" (normalized: runs of
// letters and digits joined by "-"; a hash of the rule is appended when
// two paths normalize alike) with rule Host(host) && the path matcher
// (see pathRule), and the service "<ns>-<service>-<port>" built from the
// Service's endpoints and its service.* annotations (serversscheme,
// serverstransport, passhostheader, sticky.cookie.*, nativelb,
// middlewares). An Ingress without rules but with a default backend
// makes "default-router" (PathPrefix(`/`), lowest priority) to
// "default-backend", once per provider. spec.tls Secrets (type
// kubernetes.io/tls) become certificates; as in Traefik, a router serves
// TLS only with the router.tls annotation (or an entrypoint with TLS).
//
// A path whose Service is missing, has no such port, or (unless
// allowEmptyServices) no ready endpoint is left out with a problem naming
// the Ingress and the field; the rest of the Ingress is served. With
// ingressEndpoint, status.loadBalancer.ingress of every Ingress served is
// written in the background (ip/hostname, or copied from
// publishedService).
package ingress
