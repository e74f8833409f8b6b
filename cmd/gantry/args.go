package main

import (
	"errors"
	"fmt"
	"strings"
)

// cliArgs is the parsed command line.
type cliArgs struct {
	command    string     // "run" (default), "validate", "healthcheck", "version", "help"
	configFile string     // --configFile
	flags      []flagPair // every other --key=value, in order
}

type flagPair struct{ key, value string }

// parseArgs splits the command line into the subcommand, --configFile and
// Traefik-style option flags: "--entryPoints.web.address=:80",
// "--entrypoints.web.address :80", "--api.insecure" (booleans and sections
// need no value). Keys are case-insensitive. One or two leading dashes.
func parseArgs(args []string) (cliArgs, error) {
	c := cliArgs{command: "run"}
	sawCommand := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			if sawCommand {
				return c, fmt.Errorf("unexpected argument %q (one subcommand at most: run, validate, healthcheck, version)", a)
			}
			switch a {
			case "run", "validate", "healthcheck", "version", "help":
				c.command, sawCommand = a, true
				continue
			}
			return c, fmt.Errorf("unknown subcommand %q (want run, validate, healthcheck or version)", a)
		}
		key, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if key == "" {
			return c, fmt.Errorf("bad flag %q", a)
		}
		switch strings.ToLower(key) {
		case "h", "help":
			c.command = "help"
			continue
		case "version":
			// Not an option: "gantry --version" printed a warning and
			// started a proxy on :80 (issue 23).
			if hasValue {
				return c, fmt.Errorf("flag --version takes no value")
			}
			c.command = "version"
			continue
		case "configfile":
			if !hasValue {
				if i+1 >= len(args) {
					return c, errors.New("flag --configFile needs a value")
				}
				i++
				value = args[i]
			}
			c.configFile = value
			continue
		}
		if !hasValue {
			if takesValue(splitKey(key)) && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				value = args[i]
			} else {
				value = "true"
			}
		}
		c.flags = append(c.flags, flagPair{key, value})
	}
	return c, nil
}
