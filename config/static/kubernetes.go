package static

import "github.com/gantry-proxy/gantry/config"

// KubernetesAPI is how a Kubernetes provider reaches the API server:
// the options endpoint, token and certAuthFilePath, which each of
// Traefik's Kubernetes providers has (kubernetesIngress, kubernetesCRD,
// kubernetesGateway, kubernetesIngressNGINX) with the same meaning. In a
// pod (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT set) none is
// needed: the service account is used, Endpoint overriding its host;
// elsewhere, with Endpoint empty, the file $KUBECONFIG names; else
// Endpoint is required.
// Source: https://doc.traefik.io/traefik/v3.7/reference/install-configuration/providers/kubernetes/kubernetes-ingress/
type KubernetesAPI struct {
	// Endpoint is the API server's URL ("https://host:port").
	Endpoint string `json:"endpoint,omitempty"`
	// Token is a bearer token, or the path of a file holding one (read
	// once at start); it replaces the service account's or kubeconfig's.
	Token string `json:"token,omitempty"`
	// CertAuthFilePath is a PEM file of the CA certificates that verify
	// the API server reached at Endpoint (outside a pod, without
	// $KUBECONFIG).
	CertAuthFilePath string `json:"certAuthFilePath,omitempty"`
}

// KubernetesIngress is providers.kubernetesIngress, with Traefik v3.7's
// keys and defaults.
// Source: https://doc.traefik.io/traefik/providers/kubernetes-ingress/
type KubernetesIngress struct {
	KubernetesAPI
	// Namespaces limits what is read (default: all namespaces).
	Namespaces []string `json:"namespaces,omitempty"`
	// LabelSelector selects the Ingresses read (Kubernetes selector syntax).
	LabelSelector string `json:"labelSelector,omitempty"`
	// IngressClass is the IngressClass name (controller
	// traefik.io/ingress-controller) or kubernetes.io/ingress.class
	// annotation value to serve; empty: every IngressClass of the
	// controller, the annotation "traefik", and Ingresses with neither.
	IngressClass string `json:"ingressClass,omitempty"`
	// ThrottleDuration is the least time between two configurations
	// built from the cluster (default 0: each change is built at once).
	ThrottleDuration config.Duration `json:"throttleDuration,omitempty"`
	// AllowEmptyServices keeps a service without endpoints (it answers
	// 503) instead of leaving its routers out.
	AllowEmptyServices bool `json:"allowEmptyServices,omitempty"`
	// AllowExternalNameServices admits Services of type ExternalName.
	AllowExternalNameServices bool `json:"allowExternalNameServices,omitempty"`
	// IngressEndpoint, when set, is written into status.loadBalancer of
	// every Ingress served.
	IngressEndpoint *KubernetesIngressEndpoint `json:"ingressEndpoint,omitempty"`
	// NativeLBByDefault sends to the Service's ClusterIP instead of its
	// endpoints (per Service: annotation service.nativelb).
	NativeLBByDefault bool `json:"nativeLBByDefault,omitempty"`
	// StrictPrefixMatching makes pathType Prefix match whole path
	// elements (/foo matches /foo and /foo/bar, not /foobar), as the
	// Ingress specification says.
	StrictPrefixMatching bool `json:"strictPrefixMatching,omitempty"`
	// DisableIngressClassLookup (deprecated in Traefik) and
	// DisableClusterScopeResources stop reading IngressClasses: only the
	// kubernetes.io/ingress.class annotation (or no class) selects.
	DisableIngressClassLookup    bool `json:"disableIngressClassLookup,omitempty"`
	DisableClusterScopeResources bool `json:"disableClusterScopeResources,omitempty"`
	// CrossProviderNamespaces, when set, lists the namespaces whose
	// Ingresses and Services may refer to middlewares, TLS options and
	// serversTransports; others are refused.
	CrossProviderNamespaces []string `json:"crossProviderNamespaces,omitempty"`
}

// KubernetesIngressEndpoint is providers.kubernetesIngress.ingressEndpoint:
// IP and/or Hostname, or PublishedService ("namespace/name") whose status
// (LoadBalancer), external IPs (ClusterIP) or externalName is copied.
type KubernetesIngressEndpoint struct {
	IP               string `json:"ip,omitempty"`
	Hostname         string `json:"hostname,omitempty"`
	PublishedService string `json:"publishedService,omitempty"`
}

// KubernetesCRD is providers.kubernetesCRD: Traefik's custom resources
// (traefik.io/v1alpha1) from the Kubernetes API. LabelSelector selects the custom resources (not the
// Services and Secrets they use). ThrottleDuration is the least time
// between two snapshots (0: none). CrossProviderNamespaces, when set,
// lists the namespaces whose objects may name other providers' objects
// ("x@file"). DisableClusterScopeResources is accepted for compatibility:
// the provider reads no cluster-scoped resource.
// Source: https://doc.traefik.io/traefik/v3.7/reference/install-configuration/providers/kubernetes/kubernetes-crd/
type KubernetesCRD struct {
	KubernetesAPI
	Namespaces                   []string        `json:"namespaces,omitempty"`
	AllowCrossNamespace          bool            `json:"allowCrossNamespace,omitempty"`
	AllowExternalNameServices    bool            `json:"allowExternalNameServices,omitempty"`
	CrossProviderNamespaces      []string        `json:"crossProviderNamespaces,omitempty"`
	LabelSelector                string          `json:"labelSelector,omitempty"`
	IngressClass                 string          `json:"ingressClass,omitempty"`
	ThrottleDuration             config.Duration `json:"throttleDuration,omitempty"`
	AllowEmptyServices           bool            `json:"allowEmptyServices,omitempty"`
	NativeLBByDefault            bool            `json:"nativeLBByDefault,omitempty"`
	DisableClusterScopeResources bool            `json:"disableClusterScopeResources,omitempty"`
}
