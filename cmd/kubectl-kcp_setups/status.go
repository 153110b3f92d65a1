package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/dynamic"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

const statusExample = `  # The setup of the RootShard root: its cache, shards, front proxies, virtual workspaces,
  # kubeconfigs and the certificates of each
  kubectl kcp-setups status rootshard/root -n kcp-system

  # With every condition of every object
  kubectl kcp-setups status rootshard/root --conditions`

// certificates is cert-manager's Certificate, read with the dynamic client: the plugin needs
// its labels and Ready condition only.
var certificates = schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}

// node is one object of the tree.
type node struct {
	kind, name string
	phase      string
	created    metav1.Time
	conditions []metav1.Condition
	// ready is the condition READY shows: Available for a setup, Ready for a Certificate.
	ready    string
	children []*node
	// version is the RootShard's status.version (the root of the tree alone).
	version *operatorv1alpha1.SetupVersion
}

func newStatusCommand(flags *clientFlags, stdout io.Writer) *cobra.Command {
	var withConditions bool
	cmd := &cobra.Command{
		Use:   "status rootshard/NAME [--conditions]",
		Short: "Print a RootShard's setup as a tree, with certificates and conditions",
		Long: `Print the setup of a RootShard as a tree, as kubectl tree does for owner references: the
CacheServer it uses, its Shards, FrontProxies, VirtualWorkspaces and Kubeconfigs, and under
each the cert-manager Certificates the controllers made for it. READY is the Available
condition of a setup and the Ready condition of a Certificate; REASON is the reason of its
first condition that is not True. For a RootShard with spec.version, the tree is followed by
the setup's release (current→target while a roll is under way), the rolling group and the
Upgrading condition, and each component's desired and running release, and whether it pins
its own.`,
		Example:           statusExample,
		ValidArgsFunction: completeObjects(flags, rootShardKind),
		RunE: func(cmd *cobra.Command, args []string) error {
			target, err := parseObject(cmd, args, rootShardKind)
			if err != nil {
				return err
			}
			ops, ns, err := clients(flags)
			if err != nil {
				return err
			}
			cfg, err := flags.config().ClientConfig()
			if err != nil {
				return err
			}
			dyn, err := dynamic.NewForConfig(cfg)
			if err != nil {
				return err
			}
			tree, err := setupTree(cmd.Context(), ops, dyn, ns, target.name)
			if err != nil {
				return err
			}
			if err := printTree(stdout, ns, tree, withConditions, time.Now()); err != nil {
				return err
			}
			return printVersion(stdout, tree)
		},
	}
	cmd.Flags().BoolVar(&withConditions, "conditions", false, "Print every condition of every object under it.")
	return cmd
}

// setupTree reads the setup of the RootShard name in ns.
func setupTree(ctx context.Context, ops clientset.Interface, dyn dynamic.Interface, ns, name string) (*node, error) {
	c := ops.OperatorV1alpha1()
	rs, err := c.RootShards(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	certs, err := dyn.Resource(certificates).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: pki.LabelManagedBy + "=" + pki.ManagedBy})
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("listing certificates: %w", err)
	}
	setup := func(kind string, meta metav1.ObjectMeta, phase operatorv1alpha1.Phase, conditions []metav1.Condition) *node {
		n := &node{kind: kind, name: meta.Name, phase: string(phase), created: meta.CreationTimestamp, conditions: conditions, ready: operatorv1alpha1.ConditionAvailable}
		if certs != nil {
			n.children = append(n.children, certificatesOf(certs.Items, strings.ToLower(kind), meta.Name)...)
		}
		return n
	}
	root := setup("RootShard", rs.ObjectMeta, rs.Status.Phase, rs.Status.Conditions)
	root.version = rs.Status.Version
	// The kubeconfigs of a target hang under it: collect them by target first.
	kubeconfigs, err := c.Kubeconfigs(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	withKubeconfigs := func(n *node, refOf func(operatorv1alpha1.KubeconfigTarget) string) *node {
		for _, k := range kubeconfigs.Items {
			if refOf(k.Spec.Target) == n.name {
				n.children = append(n.children, setup("Kubeconfig", k.ObjectMeta, operatorv1alpha1.Phase(k.Status.Phase), k.Status.Conditions))
			}
		}
		return n
	}
	if rs.Spec.Cache != nil && rs.Spec.Cache.Reference != nil {
		cache, err := c.CacheServers(ns).Get(ctx, rs.Spec.Cache.Reference.Name, metav1.GetOptions{})
		switch {
		case err == nil:
			root.children = append(root.children, setup("CacheServer", cache.ObjectMeta, cache.Status.Phase, cache.Status.Conditions))
		case apierrors.IsNotFound(err):
			root.children = append(root.children, &node{kind: "CacheServer", name: rs.Spec.Cache.Reference.Name, phase: "NotFound"})
		default:
			return nil, err
		}
	}
	virtualWorkspaces, err := c.VirtualWorkspaces(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	vwsOf := func(n *node, onShard bool) *node {
		for _, vw := range virtualWorkspaces.Items {
			ref := vw.Spec.Target.RootShardRef
			if onShard {
				ref = vw.Spec.Target.ShardRef
			}
			if ref != nil && ref.Name == n.name {
				n.children = append(n.children, setup("VirtualWorkspace", vw.ObjectMeta, vw.Status.Phase, vw.Status.Conditions))
			}
		}
		return n
	}
	shards, err := c.Shards(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, s := range shards.Items {
		if s.Spec.RootShard.Reference != nil && s.Spec.RootShard.Reference.Name == rs.Name {
			n := setup("Shard", s.ObjectMeta, s.Status.Phase, s.Status.Conditions)
			root.children = append(root.children, withKubeconfigs(vwsOf(n, true), func(t operatorv1alpha1.KubeconfigTarget) string { return localName(t.ShardRef) }))
		}
	}
	proxies, err := c.FrontProxies(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, f := range proxies.Items {
		if f.Spec.RootShard.Reference != nil && f.Spec.RootShard.Reference.Name == rs.Name {
			n := setup("FrontProxy", f.ObjectMeta, f.Status.Phase, f.Status.Conditions)
			root.children = append(root.children, withKubeconfigs(n, func(t operatorv1alpha1.KubeconfigTarget) string { return localName(t.FrontProxyRef) }))
		}
	}
	vwsOf(root, false)
	withKubeconfigs(root, func(t operatorv1alpha1.KubeconfigTarget) string { return localName(t.RootShardRef) })
	return root, nil
}

// certificatesOf are the Certificates labelled for the object name of kind.
func certificatesOf(certs []unstructured.Unstructured, kind, name string) []*node {
	var out []*node
	for _, cert := range certs {
		if cert.GetLabels()[pki.OwnerLabel(kind)] != name {
			continue
		}
		n := &node{kind: "Certificate", name: cert.GetName(), created: cert.GetCreationTimestamp(), ready: "Ready"}
		conditions, _, _ := unstructured.NestedSlice(cert.Object, "status", "conditions")
		for _, c := range conditions {
			m, _ := c.(map[string]any)
			str := func(k string) string { s, _ := m[k].(string); return s }
			n.conditions = append(n.conditions, metav1.Condition{Type: str("type"), Status: metav1.ConditionStatus(str("status")), Reason: str("reason"), Message: str("message")})
		}
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b *node) int { return strings.Compare(a.name, b.name) })
	return out
}

// localName is the name ref names, "" for none.
func localName(ref *corev1.LocalObjectReference) string {
	if ref == nil {
		return ""
	}
	return ref.Name
}

// printTree prints the tree in kubectl tree's columns.
func printTree(w io.Writer, ns string, root *node, withConditions bool, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tNAME\tPHASE\tREADY\tREASON\tAGE")
	var walk func(n *node, prefix, childPrefix string)
	walk = func(n *node, prefix, childPrefix string) {
		ready, reason := "-", ""
		for _, c := range n.conditions {
			if c.Type == n.ready {
				ready = string(c.Status)
			}
			if reason == "" && c.Status != metav1.ConditionTrue {
				reason = c.Reason
			}
		}
		age := "-"
		if !n.created.IsZero() {
			age = duration.HumanDuration(now.Sub(n.created.Time))
		}
		fmt.Fprintf(tw, "%s\t%s%s/%s\t%s\t%s\t%s\t%s\n", ns, prefix, n.kind, n.name, orDash(n.phase), ready, reason, age)
		items := len(n.children)
		if withConditions {
			items += len(n.conditions)
		}
		i := 0
		branch := func() (string, string) {
			i++
			if i == items {
				return childPrefix + "└─", childPrefix + "  "
			}
			return childPrefix + "├─", childPrefix + "│ "
		}
		if withConditions {
			for _, c := range n.conditions {
				p, _ := branch()
				fmt.Fprintf(tw, "%s\t%s%s\t\t%s\t%s\t\n", ns, p, c.Type, c.Status, c.Reason)
			}
		}
		for _, child := range n.children {
			p, cp := branch()
			walk(child, p, cp)
		}
	}
	walk(root, "", "")
	return tw.Flush()
}

// printVersion prints the release of the setup of the tree's RootShard, when it has one
// (spec.version): the roll's releases, group and Upgrading condition, then each component's
// release, desired and running, and whether it pins its own.
func printVersion(w io.Writer, root *node) error {
	v := root.version
	if v == nil || v.Target == "" {
		return nil
	}
	release := v.Current
	if v.Target != v.Current {
		release = v.Current + "→" + v.Target
	}
	fmt.Fprintf(w, "\nRelease %s", release)
	if v.Group != "" {
		fmt.Fprintf(w, ", group %s", v.Group)
	}
	for _, c := range root.conditions {
		if c.Type == operatorv1alpha1.ConditionUpgrading {
			fmt.Fprintf(w, "\nUpgrading=%s %s: %s", c.Status, c.Reason, c.Message)
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tDESIRED\tRUNNING\tPINNED")
	for _, c := range v.Components {
		pinned := "-"
		if c.Pinned {
			pinned = "pinned"
		}
		fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\n", c.Kind, c.Name, orDash(c.Desired), orDash(c.Running), pinned)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
