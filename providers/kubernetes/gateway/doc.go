// Package gateway translates Gateway API objects (sigs.k8s.io/gateway-api
// v1: GatewayClass, Gateway, HTTPRoute, GRPCRoute, TLSRoute, TCPRoute,
// UDPRoute, ReferenceGrant) into one Gantry configuration, the Problems
// found on the way, and the status each object should carry. It is pure:
// Translate reads an Input (listed by informers) and a Backends resolver
// and neither talks to the API server nor keeps state, so the provider
// (Provider, provider.go) calls it on every change, from the informer
// caches of the shared Kubernetes base (providers/kubernetes/k8s), and its
// status writer (statuswriter.go) writes back only the statuses that
// differ.
//
// Behaviour follows the Gateway API specification
// (https://gateway-api.sigs.k8s.io/reference/spec/) and, where the
// specification leaves a choice, Traefik v3.7's kubernetesGateway
// provider (https://doc.traefik.io/traefik/reference/install-configuration/providers/kubernetes/kubernetes-gateway/):
//
//   - A GatewayClass is ours when its controllerName is Options.ControllerName
//     (default "traefik.io/gateway-controller"); only Gateways of our classes
//     are read.
//   - A listener is served by the entrypoint whose address has the
//     listener's port (HTTP listeners skip entrypoints with http.tls;
//     UDP listeners need a "/udp" entrypoint); several candidates: the
//     first by name. No entrypoint: Accepted=False PortUnavailable.
//   - Routers of HTTPRoutes get priorities that encode the specification's
//     precedence exactly (see precedence.go); ties between routes fall to
//     the oldest route, then namespace/name, then rule and match order.
//   - TCPRoute and UDPRoute are read only with Options.ExperimentalChannel,
//     as Traefik does.
//
// Router, service and middleware names are "<kind>-<namespace>-<name>-..."
// without '@'; the provider's objects are qualified "@kubernetesgateway".
package gateway
