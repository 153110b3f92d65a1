package app

import (
	"github.com/spf13/cobra"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	cliflag "k8s.io/component-base/cli/flag"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/version/verflag"
)

// NewCommand returns the kcp-setups-apiserver command.
func NewCommand() *cobra.Command {
	o := NewOptions()
	logging := logsapi.NewLoggingConfiguration()
	// The logging flags (--logging-format, contextual logging) are gated; the gate must know them.
	featureGate := utilfeature.DefaultMutableFeatureGate
	utilruntime.Must(logsapi.AddFeatureGates(featureGate))

	cmd := &cobra.Command{
		Use:   "kcp-setups-apiserver",
		Short: "Serves kcp setups (operator.kcp.io) as a Kubernetes aggregated API",
		Long: `kcp-setups-apiserver serves RootShards, Shards, FrontProxies, CacheServers,
Kubeconfigs and VirtualWorkspaces (operator.kcp.io/v1alpha1) behind kube-apiserver's
aggregation layer.
Without --etcd-servers it stores them in an embedded etcd.`,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			verflag.PrintAndExitIfRequested()
			// Bad flags fail before anything, logging included, is set up.
			if err := o.Validate(); err != nil {
				return err
			}
			if err := logsapi.ValidateAndApply(logging, featureGate); err != nil {
				return err
			}
			cliflag.PrintFlags(cmd.Flags())
			return o.run(cmd.Context())
		},
	}

	fs := cmd.Flags()
	named := cliflag.NamedFlagSets{}
	o.AddFlags(named.FlagSet("kcp-setups"))
	logsapi.AddFlags(logging, named.FlagSet("logging"))
	verflag.AddFlags(named.FlagSet("global"))
	for _, f := range named.FlagSets {
		fs.AddFlagSet(f)
	}
	cmd.AddCommand(newEtcdAgentCommand())
	return cmd
}
