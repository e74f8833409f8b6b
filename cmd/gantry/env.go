package main

import (
	"slices"
	"strings"
)

// envConfig holds the option trees read from the environment.
type envConfig struct {
	traefik, gantry *layer // nil when no variable sets an option
	configFile      string // GANTRY_CONFIGFILE, else TRAEFIK_CONFIGFILE
}

// handoffEnvPrefix starts the variables a SIGUSR2 upgrade hands its
// successor (dataplane/handoff); they are not options.
const handoffEnvPrefix = "GANTRY_UPGRADE_"

// envTrees reads TRAEFIK_* and GANTRY_* variables: the name after the
// prefix, split at "_" and lower-cased, is the option path
// (GANTRY_ENTRYPOINTS_WEB_ADDRESS=:80 is entryPoints.web.address, as in
// Traefik's environment loader, so entrypoint names come out lower-case).
// As in Traefik, only variables whose first segment is a top-level option
// (ENTRYPOINTS, PROVIDERS, API, …) are read: GANTRY_IMAGE is not an
// option, GANTRY_API_INSECUR is an unknown one. GANTRY_CONFIGFILE /
// TRAEFIK_CONFIGFILE name the configuration file.
func envTrees(environ []string) envConfig {
	var e envConfig
	var traefikFile string
	for _, kv := range slices.Sorted(slices.Values(environ)) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.HasPrefix(k, handoffEnvPrefix) {
			continue
		}
		prefix, l := "GANTRY_", &e.gantry
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			prefix, l = "TRAEFIK_", &e.traefik
			if rest, ok = strings.CutPrefix(k, prefix); !ok {
				continue
			}
		}
		path := strings.Split(strings.ToLower(rest), "_")
		if len(path) == 1 && path[0] == "configfile" {
			if prefix == "GANTRY_" {
				e.configFile = v
			} else {
				traefikFile = v
			}
			continue
		}
		if !isRootOption(path[0]) {
			continue
		}
		if *l == nil {
			*l = newLayer("environment "+prefix+"*", func(p []string) string { return prefix + strings.ToUpper(strings.Join(p, "_")) })
		}
		(*l).add(path, v, true, func([]string) string { return "environment" })
	}
	if e.configFile == "" {
		e.configFile = traefikFile
	}
	return e
}
