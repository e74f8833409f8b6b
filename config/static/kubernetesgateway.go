package static

import "github.com/gantry-proxy/gantry/config"

// KubernetesGateway is providers.kubernetesGateway: Gateway API objects
// of GatewayClasses whose controllerName is traefik.io/gateway-controller.
// Keys and defaults are Traefik's.
// Source: https://doc.traefik.io/traefik/reference/install-configuration/providers/kubernetes/kubernetes-gateway/
type KubernetesGateway struct {
	KubernetesAPI
	// Namespaces limits what is read (default: all); LabelSelector selects
	// GatewayClasses.
	Namespaces    []string `json:"namespaces,omitempty"`
	LabelSelector string   `json:"labelSelector,omitempty"`
	// ThrottleDuration is the least time between two snapshots (default 0).
	ThrottleDuration config.Duration `json:"throttleDuration,omitempty"`
	// ExperimentalChannel serves TCPRoute and UDPRoute.
	ExperimentalChannel bool `json:"experimentalChannel,omitempty"`
	// StatusAddress is what Gateways get in status.addresses.
	StatusAddress *GatewayStatusAddress `json:"statusAddress,omitempty"`
	// NativeLBByDefault sends traffic to a Service's ClusterIP instead of
	// its endpoints.
	NativeLBByDefault bool `json:"nativeLBByDefault,omitempty"`
	// QPS and Burst limit requests to the API server (Traefik defaults 50
	// and 100).
	QPS   int `json:"qps,omitempty"`
	Burst int `json:"burst,omitempty"`
}

// GatewayStatusAddress is providers.kubernetesGateway.statusAddress: an
// IP, a hostname, or the load-balancer addresses of a Service.
type GatewayStatusAddress struct {
	IP       string             `json:"ip,omitempty"`
	Hostname string             `json:"hostname,omitempty"`
	Service  *GatewayServiceRef `json:"service,omitempty"`
}

// GatewayServiceRef names a Service (statusAddress.service).
type GatewayServiceRef struct {
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}
