package main

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/gantry-proxy/gantry/config/static"
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

// splitKey splits a flag key at dots, and "name[3]" into "name", "3".
func splitKey(key string) []string {
	var out []string
	for seg := range strings.SplitSeq(key, ".") {
		for {
			name, rest, ok := strings.Cut(seg, "[")
			if !ok {
				break
			}
			idx, after, ok := strings.Cut(rest, "]")
			if !ok {
				break
			}
			if name != "" {
				out = append(out, name)
			}
			out = append(out, idx)
			seg = after
		}
		if seg != "" {
			out = append(out, seg)
		}
	}
	return out
}

// takesValue reports whether the option at path needs a value (it is not a
// boolean or a section, which a bare flag switches on). Unknown paths take
// no value: they are reported as unknown later.
func takesValue(path []string) bool {
	t := reflect.TypeFor[static.Configuration]()
	for _, seg := range path {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			f, ok := fieldByName(t, seg)
			if !ok {
				return false
			}
			t = f.Type
		case reflect.Map, reflect.Slice:
			t = t.Elem()
		default:
			return false
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() != reflect.Bool && t.Kind() != reflect.Struct
}

// setPath stores value at the dotted path in tree, replacing a boolean
// section switch ("providers.docker=true") by a mapping when a sub-option
// follows.
func setPath(tree map[string]any, path []string, value string) {
	for _, seg := range path[:len(path)-1] {
		next, ok := tree[seg].(map[string]any)
		if !ok {
			next = map[string]any{}
			tree[seg] = next
		}
		tree = next
	}
	last := path[len(path)-1]
	if _, isMap := tree[last].(map[string]any); isMap && isTrue(value) {
		return // "--api" after "--api.insecure": the section is on already
	}
	tree[last] = value
}

func isTrue(s string) bool { return strings.EqualFold(s, "true") }
