package static

import "github.com/gantry-proxy/gantry/config"

// KubernetesIngressNGINX is providers.kubernetesIngressNGINX: Ingresses of
// ingress-nginx's class with their nginx.ingress.kubernetes.io/
// annotations. Option names and defaults are Traefik v3.7's; Gantry
// follows ingress-nginx's documented behaviour where Traefik's mapping
// differs (README, "Moving from ingress-nginx").
// Source: https://doc.traefik.io/traefik/reference/install-configuration/providers/kubernetes/kubernetes-ingress-nginx/
type KubernetesIngressNGINX struct {
	KubernetesAPI
	// ThrottleDuration is the least time between two builds (default 0).
	ThrottleDuration config.Duration `json:"throttleDuration,omitempty"`
	// WatchNamespace limits the provider to one namespace (default all).
	WatchNamespace string `json:"watchNamespace,omitempty"`
	// IngressClass (default "nginx"), ControllerClass (default
	// "k8s.io/ingress-nginx"), WatchIngressWithoutClass and
	// IngressClassByName select the Ingresses served, as ingress-nginx's
	// flags of the same names.
	IngressClass             string `json:"ingressClass,omitempty"`
	ControllerClass          string `json:"controllerClass,omitempty"`
	WatchIngressWithoutClass bool   `json:"watchIngressWithoutClass,omitempty"`
	IngressClassByName       bool   `json:"ingressClassByName,omitempty"`
	// HTTPEntryPoint and HTTPSEntryPoint serve every path in plain HTTP
	// and in TLS (default "web" and "websecure").
	HTTPEntryPoint  string `json:"httpEntryPoint,omitempty"`
	HTTPSEntryPoint string `json:"httpsEntryPoint,omitempty"`
	// AllowCrossNamespaceResources lets auth-secret and custom-headers
	// name another namespace's Secret or ConfigMap (default false).
	AllowCrossNamespaceResources bool `json:"allowCrossNamespaceResources,omitempty"`
	// GlobalAllowedResponseHeaders are the headers custom-headers may set.
	GlobalAllowedResponseHeaders []string `json:"globalAllowedResponseHeaders,omitempty"`
	// AllowSnippetAnnotations must stay false: Gantry never runs raw nginx
	// configuration (true is refused at start).
	AllowSnippetAnnotations bool `json:"allowSnippetAnnotations,omitempty"`
}
