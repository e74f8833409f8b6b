package main

import (
	"slices"
	"strings"
)

// envConfig holds the option trees read from the environment.
type envConfig struct {
	traefik, gantry map[string]any
	configFile      string // GANTRY_CONFIGFILE, else TRAEFIK_CONFIGFILE
}

// handoffEnvPrefix starts the variables a SIGUSR2 upgrade hands its
// successor (dataplane/handoff); envTrees skips them.
const handoffEnvPrefix = "GANTRY_UPGRADE_"

// envTrees reads TRAEFIK_* and GANTRY_* variables: the name after the
// prefix, split at "_" and lower-cased, is the option path
// (GANTRY_ENTRYPOINTS_WEB_ADDRESS=:80 is entryPoints.web.address, as in
// Traefik's environment loader, so entrypoint names come out lower-case).
// GANTRY_CONFIGFILE / TRAEFIK_CONFIGFILE name the configuration file.
func envTrees(environ []string) envConfig {
	e := envConfig{traefik: map[string]any{}, gantry: map[string]any{}}
	var traefikFile string
	for _, kv := range slices.Sorted(slices.Values(environ)) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if strings.HasPrefix(k, handoffEnvPrefix) {
			continue // the binary upgrade's descriptors (handoff.EnvFDs, EnvReady), not configuration
		}
		var tree map[string]any
		var rest string
		if r, ok := strings.CutPrefix(k, "GANTRY_"); ok {
			tree, rest = e.gantry, r
		} else if r, ok := strings.CutPrefix(k, "TRAEFIK_"); ok {
			tree, rest = e.traefik, r
		} else {
			continue
		}
		if rest == "" {
			continue
		}
		path := strings.Split(strings.ToLower(rest), "_")
		if len(path) == 1 && path[0] == "configfile" {
			if strings.HasPrefix(k, "GANTRY_") {
				e.configFile = v
			} else {
				traefikFile = v
			}
			continue
		}
		setPath(tree, path, v)
	}
	if e.configFile == "" {
		e.configFile = traefikFile
	}
	return e
}
