package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
)

// kind is a kind the plugin names on its command line.
type kind struct {
	// resource is the plural the API serves it as, kind its Kind; aliases are what a user
	// may type.
	resource, kind string
	aliases        []string
}

// name is the kind's Kind, as an Event's involvedObject names it.
func (k kind) name() string { return k.kind }

var (
	rootShardKind  = kind{"rootshards", "RootShard", []string{"rootshard", "rootshards", "rootshard.operator.kcp.io", "rootshards.operator.kcp.io"}}
	shardKind      = kind{"shards", "Shard", []string{"shard", "shards", "shard.operator.kcp.io", "shards.operator.kcp.io"}}
	frontProxyKind = kind{"frontproxies", "FrontProxy", []string{"frontproxy", "frontproxies", "frontproxy.operator.kcp.io", "frontproxies.operator.kcp.io"}}
)

// object is a TYPE/NAME of the command line.
type object struct {
	kind kind
	name string
}

func (o object) String() string { return o.kind.aliases[0] + "/" + o.name }

// parseObject reads TYPE/NAME, or TYPE NAME, as kubectl does, for one of kinds.
func parseObject(cmd *cobra.Command, args []string, kinds ...kind) (object, error) {
	var typ, name string
	switch {
	case len(args) == 1 && strings.Contains(args[0], "/"):
		typ, name, _ = strings.Cut(args[0], "/")
	case len(args) == 2:
		typ, name = args[0], args[1]
	default:
		return object{}, usageError{cmd.CommandPath(), fmt.Errorf("exactly one TYPE/NAME is required, got %d arguments", len(args))}
	}
	if name == "" {
		return object{}, usageError{cmd.CommandPath(), fmt.Errorf("a resource name is required")}
	}
	var known []string
	for _, k := range kinds {
		for _, alias := range k.aliases {
			if strings.EqualFold(typ, alias) {
				return object{k, name}, nil
			}
		}
		known = append(known, k.aliases[0])
	}
	return object{}, usageError{cmd.CommandPath(), fmt.Errorf("the server doesn't have a resource type %q here: one of %s", typ, strings.Join(known, ", "))}
}

// completeObjects completes TYPE/NAME of kinds with the names of the namespace's objects.
func completeObjects(flags *clientFlags, kinds ...kind) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		typ, _, typed := strings.Cut(toComplete, "/")
		if !typed {
			var types []cobra.Completion
			for _, k := range kinds {
				types = append(types, k.aliases[0]+"/")
			}
			return types, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		}
		ops, ns, err := clients(flags)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		names, err := namesOf(cmd.Context(), ops, ns, typ, kinds)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var out []cobra.Completion
		for _, n := range names {
			out = append(out, typ+"/"+n)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// namesOf lists the names of the objects of the kind typ names in ns.
func namesOf(ctx context.Context, ops clientset.Interface, ns, typ string, kinds []kind) ([]string, error) {
	var k kind
	for _, candidate := range kinds {
		for _, alias := range candidate.aliases {
			if strings.EqualFold(typ, alias) {
				k = candidate
			}
		}
	}
	var names []string
	c := ops.OperatorV1alpha1()
	switch k.resource {
	case rootShardKind.resource:
		l, err := c.RootShards(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, o := range l.Items {
			names = append(names, o.Name)
		}
	case shardKind.resource:
		l, err := c.Shards(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, o := range l.Items {
			names = append(names, o.Name)
		}
	case frontProxyKind.resource:
		l, err := c.FrontProxies(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, o := range l.Items {
			names = append(names, o.Name)
		}
	}
	return names, nil
}

// clients are the clientset of the kubeconfig the flags select, and the namespace to work in.
func clients(flags *clientFlags) (clientset.Interface, string, error) {
	cc := flags.config()
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", err
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", err
	}
	ops, err := clientset.NewForConfig(cfg)
	return ops, ns, err
}

// mint asks the kubeconfig subresource of o for a credential.
func mint(ctx context.Context, ops clientset.Interface, ns string, o object, req *operatorv1alpha1.KubeconfigRequest) (*operatorv1alpha1.KubeconfigRequest, error) {
	c := ops.OperatorV1alpha1()
	switch o.kind.resource {
	case rootShardKind.resource:
		return c.RootShards(ns).CreateKubeconfig(ctx, o.name, req, metav1.CreateOptions{})
	case shardKind.resource:
		return c.Shards(ns).CreateKubeconfig(ctx, o.name, req, metav1.CreateOptions{})
	default:
		return c.FrontProxies(ns).CreateKubeconfig(ctx, o.name, req, metav1.CreateOptions{})
	}
}

// kubeClient is a client of the cluster the flags name, for what the plugin reads beyond
// the setups (their Events).
func kubeClient(flags *clientFlags) (kubernetes.Interface, error) {
	cfg, err := flags.config().ClientConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}
