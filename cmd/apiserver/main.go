// Command kcp-setups-apiserver serves the operator.kcp.io API.
package main

import (
	"os"
	// The time zones of maintenance windows load in a container without a zone database.
	_ "time/tzdata"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"

	"github.com/kcp-setups/apiserver/cmd/apiserver/app"
)

func main() {
	cmd := app.NewCommand()
	// SIGTERM or SIGINT cancels the context; a second one exits at once.
	cmd.SetContext(genericapiserver.SetupSignalContext())
	os.Exit(cli.Run(cmd))
}
