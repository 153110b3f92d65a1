package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
)

// cacheServerKind is a CacheServer on the command line: only rotate names one.
var cacheServerKind = kind{"cacheservers", "CacheServer", []string{"cacheserver", "cacheservers", "cacheserver.operator.kcp.io", "cacheservers.operator.kcp.io"}}

const rotateExample = `  # Start rotating the server and client CAs of the RootShard root: the new CAs are trusted next
  # to the old ones, and new client certificates come from the new client CA
  kubectl kcp-setups rotate rootshard/root --phase start --ca server --ca client

  # Once kubectl kcp-setups status shows them Prepared, drop the old CAs
  kubectl kcp-setups rotate rootshard/root --phase complete --ca server --ca client

  # Revoke every credential minted so far: rotate the CAs that sign client certificates
  kubectl kcp-setups rotate rootshard/root --phase start --ca client --ca front-proxy-client
  kubectl kcp-setups rotate rootshard/root --phase complete --ca client --ca front-proxy-client

  # Stop waiting for a FrontProxy that never becomes Available: it loses trust at complete
  kubectl kcp-setups rotate rootshard/root --phase start --ca client --exclude frontproxy/edge`

// rotateOptions are the flags of kubectl kcp-setups rotate.
type rotateOptions struct {
	phase   string
	cas     []string
	exclude []string
}

// memberKinds are the kinds of a RootShard's rotation members, by their lower-case name.
var memberKinds = map[string]string{"shard": "Shard", "frontproxy": "FrontProxy", "virtualworkspace": "VirtualWorkspace"}

// members parses --exclude: KIND/NAME each, the kind as kubectl names it.
func members(exclude []string) ([]operatorv1alpha1.CARotationMember, error) {
	var out []operatorv1alpha1.CARotationMember
	for _, e := range exclude {
		k, name, ok := strings.Cut(e, "/")
		base := strings.TrimSuffix(strings.ToLower(k), ".operator.kcp.io")
		kind := memberKinds[strings.TrimSuffix(base, "s")]
		if base == "frontproxies" {
			kind = "FrontProxy"
		}
		if !ok || name == "" || kind == "" {
			return nil, fmt.Errorf("--exclude takes shard/NAME, frontproxy/NAME or virtualworkspace/NAME, got %q", e)
		}
		out = append(out, operatorv1alpha1.CARotationMember{Kind: kind, Name: name})
	}
	return out, nil
}

func newRotateCommand(flags *clientFlags, stdout io.Writer) *cobra.Command {
	var o rotateOptions
	cmd := &cobra.Command{
		Use:   "rotate (rootshard|cacheserver)/NAME --phase (start|complete) --ca CA...",
		Short: "Start or complete the rotation of a RootShard's or CacheServer's CAs",
		Long: `Start or complete the two-phase rotation of certificate authorities through the rotation
subresource (docs/rotation.md). start issues a new CA next to each old one, which every bundle
trusts too; complete, once the rotation is Prepared, drops the old CAs, and what they signed
stops working. A RootShard's CAs: root, server, client, front-proxy-client,
requestheader-client, service-account, etcd-client, etcd-peer; a CacheServer's: ca.
--exclude names a Shard, FrontProxy or VirtualWorkspace of the RootShard that the rotation
stops waiting for; it loses trust at complete if it did not pick up the new CA.`,
		Example:           rotateExample,
		ValidArgsFunction: completeObjects(flags, rootShardKind),
		RunE: func(cmd *cobra.Command, args []string) error {
			target, err := parseObject(cmd, args, rootShardKind, cacheServerKind)
			if err != nil {
				return err
			}
			var phase operatorv1alpha1.CARotationRequestPhase
			switch strings.ToLower(o.phase) {
			case "start":
				phase = operatorv1alpha1.CARotationStart
			case "complete":
				phase = operatorv1alpha1.CARotationComplete
			default:
				return usageError{cmd.CommandPath(), fmt.Errorf("--phase must be start or complete, got %q", o.phase)}
			}
			if len(o.cas) == 0 {
				return usageError{cmd.CommandPath(), fmt.Errorf("--ca names at least one CA")}
			}
			excluded, err := members(o.exclude)
			if err != nil {
				return usageError{cmd.CommandPath(), err}
			}
			ops, ns, err := clients(flags)
			if err != nil {
				return err
			}
			req := &operatorv1alpha1.CARotation{Spec: operatorv1alpha1.CARotationSpec{Authorities: o.cas, Phase: phase, ExcludeMembers: excluded}}
			out, err := rotateCAs(cmd.Context(), ops, ns, target, req)
			if err != nil {
				return err
			}
			return printRotations(stdout, out.Status.Rotations, time.Now())
		},
	}
	cmd.Flags().StringVar(&o.phase, "phase", "", "start or complete.")
	cmd.Flags().StringSliceVar(&o.cas, "ca", nil, "A CA to rotate; repeat it or separate with commas.")
	cmd.Flags().StringSliceVar(&o.exclude, "exclude", nil, "A member the rotation stops waiting for, as KIND/NAME (shard, frontproxy, virtualworkspace); repeat it or separate with commas.")
	return cmd
}

// rotateCAs asks the rotation subresource of o for req.
func rotateCAs(ctx context.Context, ops clientset.Interface, ns string, o object, req *operatorv1alpha1.CARotation) (*operatorv1alpha1.CARotation, error) {
	c := ops.OperatorV1alpha1()
	if o.kind.resource == cacheServerKind.resource {
		return c.CacheServers(ns).Rotate(ctx, o.name, req, metav1.CreateOptions{})
	}
	return c.RootShards(ns).Rotate(ctx, o.name, req, metav1.CreateOptions{})
}

// printRotations prints each rotation's phase and when it was started.
func printRotations(w io.Writer, rotations []operatorv1alpha1.CARotationState, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "CA\tPHASE\tSTARTED")
	for _, r := range rotations {
		started := "-"
		if r.LastInitiationTime != nil {
			started = now.Sub(r.LastInitiationTime.Time).Round(time.Second).String() + " ago"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Authority, r.Phase, started)
	}
	return tw.Flush()
}
