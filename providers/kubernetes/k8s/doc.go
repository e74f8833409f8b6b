// Package k8s is what every Kubernetes provider of Gantry shares
// (kubernetesIngress, kubernetesCRD, kubernetesGateway, the ingress-nginx
// annotations): the API client, namespace- and label-scoped informers, the
// level-triggered loop that turns informer caches into complete Snapshots,
// the API server's health as Problems, and the translation of Services,
// EndpointSlices and Secrets into servers and certificates.
//
// Client (NewClient): REST clients over a minimal scheme holding only the
// kinds Gantry reads or writes (kinds.go: core/v1, discovery/v1,
// networking/v1, coordination/v1, Gateway API v1), built on first use;
// custom resources are read unstructured (Informers.Dynamic). client-go's
// kubernetes/scheme, typed clientsets and informer factories are not
// linked: their package initialisation registers every built-in API
// group, in every gantry process, configured or not. Options endpoint,
// token (a value or a file path), certAuthFilePath; an explicit Kubeconfig file (gantry migrate's
// --kubeconfig) comes first; then with KUBERNETES_SERVICE_HOST and
// KUBERNETES_SERVICE_PORT set (in a pod) the in-cluster configuration
// (the service account token and CA under
// /var/run/secrets/kubernetes.io/serviceaccount, endpoint overriding the
// host); else $KUBECONFIG when set; else endpoint is required. As
// Traefik's providers do (pkg/provider/kubernetes/*/client.go).
//
// Loop (Watcher.Run): informers are started, their caches synced, then
// every add/update/delete of a watched object, and every change of the
// API server's health, marks the state dirty; the loop calls build, which
// reads the caches and returns a complete Snapshot, and publishes it with
// the health Problems appended. Events arriving while build runs, or
// during throttleDuration after a publish, are coalesced into one more
// build: the configuration is a function of the caches, never of the
// event sequence (level-triggered).
//
// Health (Health): every request of the client goes through a transport
// that records its outcome; a probe GETs /version every ProbeInterval. A
// failed connection or a 5xx makes the problem "API server unreachable"
// (the caches, so the configuration, stay as last read); 401/403 on a
// list or watch makes a problem naming the resource. Both clear on the
// next success. Before the caches first sync, snapshots are KeepConfig:
// the stored configuration keeps serving.
//
// Backends (Backends.Servers): a Service port (by number or name) of a
// ClusterIP/NodePort/LoadBalancer Service becomes one server per address
// of its EndpointSlices (label kubernetes.io/service-name) whose endpoint
// is serving, on the slice port whose name equals the Service port's name
// (named target ports are resolved by the endpoint slice controller this
// way); duplicates are dropped. A terminating endpoint that still serves
// is a fenced server (config.Server.Fenced, as Traefik's): no new session
// goes to it, clients its sticky cookie pins keep reaching it until the
// endpoint is gone (HTTP services of kubernetesIngress, kubernetesCRD and
// kubernetesIngressNGINX; Gateway API and layer-4 backends leave it out).
// nativeLB gives one server, the ClusterIP and the Service port (headless
// Services refused). ExternalName Services are
// refused unless allowExternalNameServices, else one server
// externalName:port. The scheme is https for port 443 or a port name
// starting with "https", else http (Traefik's getProtocol), unless the
// caller overrides it.
package k8s
