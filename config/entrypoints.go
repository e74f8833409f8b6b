package config

// DynamicEntryPoint is a listener a provider asks for (Gantry's dynamic
// entrypoints, traefik/traefik#6551): the label or Consul tag
// gantry.entrypoints.<name>.address=":8001", or entryPoints.<name>.address
// in a dynamic file. Routers name it in entryPoints like a static one.
// Gantry opens it only when the static configuration's
// dynamicEntryPoints.allowed permits the address (dataplane/entrypoints).
type DynamicEntryPoint struct {
	// Address is "[ip]:port", optionally suffixed "/tcp" (the default) or
	// "/udp".
	Address string `json:"address,omitempty" toml:"address,omitempty" yaml:"address,omitempty"`
}
