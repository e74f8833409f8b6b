package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/gantry-proxy/gantry/config/static"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise it comes from the module build information.
var version = ""

func main() {
	os.Exit(realMain(context.Background(), os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}

// realMain runs one command line and returns the exit code.
func realMain(ctx context.Context, args, environ []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "migrate" {
		return migrateCmd(ctx, args[1:], environ, stdout, stderr)
	}
	c, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "gantry: %v\n\n", err)
		usage(stderr)
		return 2
	}
	switch c.command {
	case "help":
		usage(stdout)
		return 0
	case "version":
		printVersion(stdout)
		return 0
	case "validate":
		return validateCmd(ctx, c, environ, stdout, stderr)
	case "healthcheck":
		return healthcheckCmd(ctx, c, environ, stdout)
	}
	return runCmd(ctx, c, environ, stderr)
}

func usage(w io.Writer) {
	fmt.Fprint(w, `Usage:
  gantry [run] [--configFile=FILE] [--<option>=<value>...]
  gantry validate [--configFile=FILE] [--<option>=<value>...]
  gantry healthcheck [--configFile=FILE] [--<option>=<value>...]
  gantry migrate ingress-nginx [--kubeconfig=FILE] [--namespace=NS] [--output=text|json]
  gantry version (or --version)

Options use Traefik's static configuration names, for example
  --entryPoints.web.address=:80 --providers.file.directory=/etc/gantry
  --providers.docker=true --api.insecure=true --log.level=DEBUG
and can also come from GANTRY_* (or TRAEFIK_*) environment variables:
  GANTRY_ENTRYPOINTS_WEB_ADDRESS=:80
or from the keys of the configuration file (YAML or TOML). An unknown
option is an error; a Traefik option Gantry does not support, a warning.

Options (<name> is any name, [n] a list index; sections take true to be
enabled with their defaults):
`)
	for _, o := range static.Options() {
		fmt.Fprintf(w, "  --%s %s\n", o.Path, o.Value)
		if o.Doc != "" {
			fmt.Fprintf(w, "        %s\n", o.Doc)
		}
	}
}

// versionString returns the version set at build time, else the module
// version, else "dev".
func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func printVersion(w io.Writer) {
	fmt.Fprintf(w, "Version:      %s\nGo version:   %s\nOS/Arch:      %s/%s\n",
		versionString(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
