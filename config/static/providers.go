package static

import "github.com/gantry-proxy/gantry/config"

// Providers lists the configured providers; a nil field is off.
type Providers struct {
	// ProvidersThrottleDuration is Traefik's debounce window (Traefik default
	// 2s); Gantry's default is 100ms.
	ProvidersThrottleDuration *config.Duration        `json:"providersThrottleDuration,omitempty"`
	File                      *File                   `json:"file,omitempty"`
	Docker                    *Docker                 `json:"docker,omitempty"`
	ConsulCatalog             *ConsulCatalog          `json:"consulCatalog,omitempty"`
	Consul                    *ConsulKV               `json:"consul,omitempty"`
	KubernetesIngress         *KubernetesIngress      `json:"kubernetesIngress,omitempty"`
	KubernetesCRD             *KubernetesCRD          `json:"kubernetesCRD,omitempty"`
	KubernetesIngressNGINX    *KubernetesIngressNGINX `json:"kubernetesIngressNGINX,omitempty"`
	KubernetesGateway         *KubernetesGateway      `json:"kubernetesGateway,omitempty"`
}

// File is providers.file. Filename and Directory are mutually exclusive.
// Source: https://doc.traefik.io/traefik/providers/file/
type File struct {
	Directory                 string `json:"directory,omitempty"`
	Filename                  string `json:"filename,omitempty"`
	Watch                     *bool  `json:"watch,omitempty"` // default true
	DebugLogGeneratedTemplate bool   `json:"debugLogGeneratedTemplate,omitempty"`
	// Limits (Gantry's; Traefik has none). Each file over a limit is a
	// problem naming it, and its last good content stays in effect.
	// MaxFileSize bounds a file as read and as rendered by its template,
	// in bytes (default 16 MiB); MaxValueSize bounds any one string value
	// in it (default 1 MiB); TemplateTimeout bounds rendering one file
	// (default 5s).
	MaxFileSize     int64           `json:"maxFileSize,omitempty"`
	MaxValueSize    int64           `json:"maxValueSize,omitempty"`
	TemplateTimeout config.Duration `json:"templateTimeout,omitempty"`
}

// Docker is providers.docker.
// Source: https://doc.traefik.io/traefik/providers/docker/
type Docker struct {
	Endpoint           string            `json:"endpoint,omitempty"` // default unix:///var/run/docker.sock
	TLS                *config.ClientTLS `json:"tls,omitempty"`
	Username           string            `json:"username,omitempty"`
	Password           string            `json:"password,omitempty"`
	ExposedByDefault   *bool             `json:"exposedByDefault,omitempty"` // default true
	Network            string            `json:"network,omitempty"`
	DefaultRule        string            `json:"defaultRule,omitempty"` // default Host(`{{ normalize .Name }}`)
	UseBindPortIP      bool              `json:"useBindPortIP,omitempty"`
	Watch              *bool             `json:"watch,omitempty"` // default true
	Constraints        string            `json:"constraints,omitempty"`
	AllowEmptyServices bool              `json:"allowEmptyServices,omitempty"`
	HTTPClientTimeout  config.Duration   `json:"httpClientTimeout,omitempty"`
	// Prefixes are Gantry's: the label prefixes read (default gantry, traefik).
	Prefixes []string `json:"prefixes,omitempty"`
	// Endpoints are several Docker engines watched by this one provider
	// (Gantry; Traefik issue #182), instead of Endpoint. The other options
	// (labels, rules, constraints) apply to all of them.
	Endpoints []DockerEndpoint `json:"endpoints,omitempty"`
}

// DockerEndpoint is one engine of providers.docker.endpoints. Name (letters,
// digits, "-"; unique) qualifies what Gantry names after a container on
// that engine. HostAddress is the address its containers are reached on
// through their published ports; it defaults to the endpoint's host for
// tcp:// and http(s):// endpoints (remote daemons) and is unset for
// unix:// (a local daemon: containers are reached on their own networks).
type DockerEndpoint struct {
	Name              string            `json:"name,omitempty"`
	Endpoint          string            `json:"endpoint,omitempty"`
	TLS               *config.ClientTLS `json:"tls,omitempty"`
	Username          string            `json:"username,omitempty"`
	Password          string            `json:"password,omitempty"`
	HostAddress       string            `json:"hostAddress,omitempty"`
	HTTPClientTimeout config.Duration   `json:"httpClientTimeout,omitempty"`
}

// ConsulEndpoint is how to reach a Consul agent.
type ConsulEndpoint struct {
	Address          string            `json:"address,omitempty"` // default 127.0.0.1:8500
	Scheme           string            `json:"scheme,omitempty"`
	DataCenter       string            `json:"datacenter,omitempty"`
	Token            string            `json:"token,omitempty"`
	EndpointWaitTime config.Duration   `json:"endpointWaitTime,omitempty"`
	HTTPAuth         *HTTPAuth         `json:"httpAuth,omitempty"`
	TLS              *config.ClientTLS `json:"tls,omitempty"`
}

// HTTPAuth is HTTP basic auth towards Consul.
type HTTPAuth struct {
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
}

// ConsulCatalog is providers.consulCatalog.
// Source: https://doc.traefik.io/traefik/providers/consul-catalog/
type ConsulCatalog struct {
	Endpoint          *ConsulEndpoint `json:"endpoint,omitempty"`
	Prefix            string          `json:"prefix,omitempty"` // default traefik (gantry is always accepted too)
	ExposedByDefault  *bool           `json:"exposedByDefault,omitempty"`
	DefaultRule       string          `json:"defaultRule,omitempty"`
	Constraints       string          `json:"constraints,omitempty"`
	RefreshInterval   config.Duration `json:"refreshInterval,omitempty"`
	Watch             *bool           `json:"watch,omitempty"` // Gantry default true
	RequireConsistent bool            `json:"requireConsistent,omitempty"`
	Stale             bool            `json:"stale,omitempty"`
	Cache             bool            `json:"cache,omitempty"`
	StrictChecks      []string        `json:"strictChecks,omitempty"` // default passing, warning
	ConnectAware      bool            `json:"connectAware,omitempty"`
	ConnectByDefault  bool            `json:"connectByDefault,omitempty"`
	ServiceName       string          `json:"serviceName,omitempty"`
	Namespaces        []string        `json:"namespaces,omitempty"`
}

// ConsulKV is providers.consul (the KV store).
// Source: https://doc.traefik.io/traefik/providers/consul/
type ConsulKV struct {
	Endpoints  []string          `json:"endpoints,omitempty"` // default 127.0.0.1:8500
	RootKey    string            `json:"rootKey,omitempty"`   // default traefik
	Token      string            `json:"token,omitempty"`
	Namespaces []string          `json:"namespaces,omitempty"`
	TLS        *config.ClientTLS `json:"tls,omitempty"`
}
