// Command kubectl-kcp_setups is the kubectl plugin of kcp-setups: `kubectl kcp-setups kubeconfig` mints a
// kubeconfig through the kubeconfig subresource and writes or merges it, `kubectl kcp-setups
// status` prints a setup's tree, `kubectl kcp-setups rotate` rotates a setup's CAs, `kubectl kcp-setups backup` takes a
// snapshot of a managed etcd, `kubectl kcp-setups plan` previews what applying setup objects would do in the host cluster. Install it with
// `go install github.com/kcp-setups/apiserver/cmd/kubectl-kcp_setups@latest`, or with krew
// (plugins/kcp-setups.yaml); kubectl finds it on the PATH.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the plugin with args and returns its exit code, as kubectl's: 0, or 1 with
// "error: ..." (or "Error from server (Reason): ...") on stderr.
func run(args []string, stdout, stderr io.Writer) int {
	cmd := newRootCommand(stdout, stderr)
	cmd.SetArgs(args)
	err := cmd.Execute()
	if err == nil {
		return 0
	}
	var status apierrors.APIStatus
	switch {
	case errors.As(err, &status) && status.Status().Reason != "":
		fmt.Fprintf(stderr, "Error from server (%s): %s\n", status.Status().Reason, status.Status().Message)
	default:
		fmt.Fprintf(stderr, "error: %v\n", err)
	}
	var usage usageError
	if errors.As(err, &usage) {
		fmt.Fprintf(stderr, "See '%s -h' for help and examples\n", usage.command)
	}
	return 1
}

// usageError is a mistake in the command line, which kubectl follows with where to read help.
type usageError struct {
	command string
	err     error
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// clientFlags are kubectl's connection flags (--kubeconfig, --context, -n, --as, ...), read
// with client-go's clientcmd as kubectl reads them.
type clientFlags struct {
	loading   *clientcmd.ClientConfigLoadingRules
	overrides *clientcmd.ConfigOverrides
}

// config is the kubeconfig the flags select.
func (f *clientFlags) config() clientcmd.ClientConfig {
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(f.loading, f.overrides)
}

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	flags := &clientFlags{loading: clientcmd.NewDefaultClientConfigLoadingRules(), overrides: &clientcmd.ConfigOverrides{}}
	root := &cobra.Command{
		Use: "kubectl-kcp_setups",
		// kubectl runs it as `kubectl kcp-setups`: help and errors say so.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl kcp-setups"},
		Short:       "Work with kcp-setups: mint kubeconfigs, show a setup's tree, rotate its CAs, take snapshots, preview a change",
		Long: `kubectl kcp-setups works with the setups of kcp-setups (operator.kcp.io/v1alpha1): it mints
kubeconfigs through the kubeconfig subresource of RootShards, Shards and FrontProxies, and
prints a RootShard's setup as a tree with its certificates and conditions, rotates the
CAs of RootShards and CacheServers through the rotation subresource, takes snapshots of
the managed etcd of RootShards and Shards through the backup subresource, and previews what
applying setup objects would do in the host cluster.`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{command: c.CommandPath(), err: err}
	})
	root.PersistentFlags().StringVar(&flags.loading.ExplicitPath, "kubeconfig", "", "Path to the kubeconfig file to use for CLI requests.")
	clientcmd.BindOverrideFlags(flags.overrides, root.PersistentFlags(), clientcmd.RecommendedConfigOverrideFlags(""))
	root.AddCommand(newKubeconfigCommand(flags, stdout, stderr), newStatusCommand(flags, stdout), newRotateCommand(flags, stdout),
		newBackupCommand(flags, stdout), newPlanCommand(flags, stdout, stderr))
	return root
}
