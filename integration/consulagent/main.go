// Command consulagent builds a real Consul v1.14.8 agent binary (MPL-2.0,
// fetched from the Go module proxy) for Gantry's integration tests. It runs
// the CLI commands registered by Consul's command package, as upstream's own
// main does, so `consulagent agent -dev ...` is the real Consul agent.
//
// This is a separate Go module: the main Gantry module never imports it.
// Build it with scripts/setup/consul.sh, which caches the binary by version.
package main

import (
	"fmt"
	"io"
	"log"
	"os"

	"github.com/hashicorp/consul/command"
	"github.com/hashicorp/consul/command/cli"
	"github.com/hashicorp/consul/command/version"
	mcli "github.com/mitchellh/cli"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run executes one Consul CLI command and returns its exit code.
func run(args []string) int {
	log.SetOutput(io.Discard)
	ui := &cli.BasicUI{
		BasicUi: mcli.BasicUi{Writer: os.Stdout, ErrorWriter: os.Stderr},
	}
	cmds := command.RegisteredCommands(ui)
	names := make([]string, 0, len(cmds))
	for name := range cmds {
		names = append(names, name)
	}
	c := &mcli.CLI{
		Name:         "consul",
		Args:         args,
		Commands:     cmds,
		Autocomplete: true,
		HelpFunc:     mcli.FilteredHelpFunc(names, mcli.BasicHelpFunc("consul")),
		HelpWriter:   os.Stdout,
		ErrorWriter:  os.Stderr,
	}
	if c.IsVersion() {
		return version.New(ui).Run(nil)
	}
	code, err := c.Run()
	if err != nil {
		fmt.Fprintf(os.Stderr, "error executing CLI: %v\n", err)
		return 1
	}
	return code
}
