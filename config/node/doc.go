// Package node is Gantry's one reflective decoder: a tree of configuration
// keys (Node) and Decode, which fills a configuration struct from it by the
// structs' JSON field names, matched case-insensitively, as Traefik's
// decoder (paerser) does.
//
// Every key-shaped input builds a tree and decodes it here: Docker labels,
// Consul Catalog tags and Consul KV paths (package config/label), and the
// static configuration's flags, environment variables and files
// (cmd/gantry). Each source builds its tree its own way — a flat
// "a.b[0].c" key, an environment variable name, a YAML or TOML document —
// and records on each node the key as the user wrote it and where (Key,
// Where), so that an error names them.
//
// Values are strings, converted to the field's kind: strconv.ParseBool's
// spellings for booleans, decimal numbers, config.Duration's syntax
// ("10s" or seconds), comma lists for []string. A struct block may be
// declared empty with "true" (tls=true). Arrays take indexes, ordered by
// number. Map keys keep the case written.
//
// The package has no state and is safe for concurrent use; trees are
// owned by their builder.
package node
