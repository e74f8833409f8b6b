// Package config is Gantry's dynamic configuration model: plain data that every
// provider emits and that router.Compile turns into a routing table.
//
// The structs follow Traefik v3's dynamic configuration
// (https://doc.traefik.io/traefik/reference/dynamic-configuration/file/) so that a
// Traefik dynamic file, label set or KV tree decodes unchanged. Field names in the
// JSON tags are Traefik's; decoding is case-insensitive (see Decode).
//
// Values of these types are immutable once published in a snapshot: nothing may
// write to a Configuration after a provider has handed it to the aggregator.
// The package imports only the standard library plus the YAML and TOML parsers.
package config
