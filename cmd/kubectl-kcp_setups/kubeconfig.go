package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

const kubeconfigExample = `  # Mint a kubeconfig for yourself on the front proxy edge, in workspace root:team-a, valid 8h
  kubectl kcp-setups kubeconfig frontproxy/edge --workspace root:team-a --validity 8h > team-a.kubeconfig

  # The same, merged into the kubeconfig kubectl uses, as the contexts kcp-<namespace>-edge(-base)
  kubectl kcp-setups kubeconfig frontproxy/edge --workspace root:team-a --validity 8h --merge
  kubectl --context kcp-default-edge get namespaces

  # For another identity (needs impersonate on it), into a file
  kubectl kcp-setups kubeconfig rootshard/root --username alice --group team-a -o alice.kubeconfig`

// kubeconfigOptions are the flags of `kubectl kcp-setups kubeconfig`.
type kubeconfigOptions struct {
	workspace, username, output, name string
	groups                            []string
	validity                          time.Duration
	merge, overwrite                  bool
}

func newKubeconfigCommand(flags *clientFlags, stdout, stderr io.Writer) *cobra.Command {
	var o kubeconfigOptions
	cmd := &cobra.Command{
		Use:   "kubeconfig (rootshard|shard|frontproxy)/NAME [--workspace PATH] [--validity DURATION] [--merge | -o FILE]",
		Short: "Mint a kubeconfig for a RootShard, Shard or FrontProxy",
		Long: `Mint a kubeconfig through the kubeconfig subresource of a RootShard, Shard or FrontProxy,
for yourself (or, with impersonate rights, for --username and --group), and print it, write it
to a file, or merge it into the kubeconfig kubectl uses.

The server caps --validity at its --max-kubeconfig-expiration and says so in a warning.`,
		Example:           kubeconfigExample,
		ValidArgsFunction: completeObjects(flags, rootShardKind, shardKind, frontProxyKind),
		RunE: func(cmd *cobra.Command, args []string) error {
			target, err := parseObject(cmd, args, rootShardKind, shardKind, frontProxyKind)
			if err != nil {
				return err
			}
			if o.merge && o.output != "" {
				return usageError{cmd.CommandPath(), fmt.Errorf("--merge and --output are exclusive")}
			}
			if o.overwrite && !o.merge && o.output == "" {
				return usageError{cmd.CommandPath(), fmt.Errorf("--overwrite needs --merge or --output")}
			}
			if o.output != "" && !o.overwrite {
				// Refused before minting, so no credential is made for nothing.
				if _, err := os.Lstat(o.output); err == nil {
					return fmt.Errorf("%s already exists: pass --overwrite to replace it", o.output)
				}
			}
			if o.validity != 0 && o.validity < 10*time.Minute {
				return usageError{cmd.CommandPath(), fmt.Errorf("--validity must be at least 10m, got %s", o.validity)}
			}
			ops, ns, err := clients(flags)
			if err != nil {
				return err
			}
			req := &operatorv1alpha1.KubeconfigRequest{Spec: operatorv1alpha1.KubeconfigRequestSpec{
				Workspace: o.workspace, Username: o.username, Groups: o.groups,
			}}
			if o.validity != 0 {
				seconds := int64(o.validity / time.Second)
				req.Spec.ExpirationSeconds = &seconds
			}
			minted, err := mint(cmd.Context(), ops, ns, target, req)
			if err != nil {
				return err
			}
			data := []byte(minted.Status.Kubeconfig)
			switch {
			case o.merge:
				name := o.name
				if name == "" {
					name = fmt.Sprintf("kcp-%s-%s", ns, target.name)
				}
				file, contexts, err := mergeKubeconfig(flags, data, name, o.overwrite)
				if err != nil {
					return err
				}
				fmt.Fprintf(stderr, "Merged contexts %v into %s, valid until %s\n", contexts, file, minted.Status.ExpirationTimestamp.UTC().Format(time.RFC3339))
			case o.output != "":
				if err := writePrivateFile(o.output, data, o.overwrite); err != nil {
					return err
				}
				fmt.Fprintf(stderr, "Wrote %s, valid until %s\n", o.output, minted.Status.ExpirationTimestamp.UTC().Format(time.RFC3339))
			default:
				_, err := stdout.Write(data)
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.workspace, "workspace", "", "The workspace path of the default context (default root).")
	cmd.Flags().DurationVar(&o.validity, "validity", 0, "How long the credential is valid, at least 10m (default: the server's, 1h).")
	cmd.Flags().StringVar(&o.username, "username", "", "The identity to mint for (default: yours; another needs impersonate).")
	cmd.Flags().StringSliceVar(&o.groups, "group", nil, "The groups to mint for (default: yours; others need impersonate).")
	cmd.Flags().BoolVar(&o.merge, "merge", false, "Merge into the kubeconfig kubectl uses (--kubeconfig, else the first file of KUBECONFIG, else ~/.kube/config).")
	cmd.Flags().StringVar(&o.name, "name", "", "With --merge: the name of the merged cluster, user and default context (default kcp-<namespace>-<name>).")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "Write the kubeconfig to this file (mode 0600) instead of standard output; an existing file needs --overwrite.")
	cmd.Flags().BoolVar(&o.overwrite, "overwrite", false, "With --output: replace an existing file; with --merge: replace the clusters, contexts and users of the same names.")
	return cmd
}

// mergeKubeconfig merges the minted kubeconfig data into the kubeconfig file kubectl writes
// to, renaming its entries after name: its default context becomes name, every other context
// name-<context>, its user name. The current context stays. An entry of the same name is
// replaced only with overwrite; otherwise nothing is written. The file is left with mode
// 0600. It returns the file and the merged contexts.
func mergeKubeconfig(flags *clientFlags, data []byte, name string, overwrite bool) (string, []string, error) {
	minted, err := clientcmd.Load(data)
	if err != nil {
		return "", nil, fmt.Errorf("the minted kubeconfig: %w", err)
	}
	file := flags.loading.ExplicitPath
	if file == "" {
		file = clientcmd.NewDefaultPathOptions().GetDefaultFilename()
	}
	into, err := clientcmd.LoadFromFile(file)
	switch {
	case os.IsNotExist(err):
		into = clientcmdapi.NewConfig()
	case err != nil:
		return "", nil, err
	}
	rename := func(entry string) string {
		if entry == minted.CurrentContext {
			return name
		}
		return name + "-" + entry
	}
	var taken []string
	users := map[string]string{}
	for user, auth := range minted.AuthInfos {
		users[user] = name
		if len(minted.AuthInfos) > 1 {
			users[user] = name + "-" + user
		}
		if _, ok := into.AuthInfos[users[user]]; ok {
			taken = append(taken, fmt.Sprintf("user %q", users[user]))
		}
		into.AuthInfos[users[user]] = auth
	}
	var contexts []string
	for ctxName, c := range minted.Contexts {
		merged := rename(ctxName)
		if _, ok := into.Clusters[merged]; ok {
			taken = append(taken, fmt.Sprintf("cluster %q", merged))
		}
		if _, ok := into.Contexts[merged]; ok {
			taken = append(taken, fmt.Sprintf("context %q", merged))
		}
		into.Clusters[merged] = minted.Clusters[c.Cluster]
		into.Contexts[merged] = &clientcmdapi.Context{Cluster: merged, AuthInfo: users[c.AuthInfo]}
		contexts = append(contexts, merged)
	}
	if len(taken) > 0 && !overwrite {
		slices.Sort(taken)
		return "", nil, fmt.Errorf("%s already has %s: pass --overwrite to replace them, or --name to merge under another name",
			file, strings.Join(taken, ", "))
	}
	if into.CurrentContext == "" {
		into.CurrentContext = name
	}
	// clientcmd.WriteToFile keeps an existing file's mode: the file is made the user's alone
	// before the key is written into it.
	if err := os.Chmod(file, 0o600); err != nil && !os.IsNotExist(err) {
		return "", nil, fmt.Errorf("making %s private: %w", file, err)
	}
	if err := clientcmd.WriteToFile(*into, file); err != nil {
		return "", nil, err
	}
	slices.Sort(contexts)
	return file, contexts, nil
}

// writePrivateFile writes data to file with mode 0600. An existing file is refused without
// overwrite; with it, its mode is set to 0600 before the data is written, since os.WriteFile
// would keep a mode that lets others read the key.
func writePrivateFile(file string, data []byte, overwrite bool) error {
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if !overwrite {
		flag |= os.O_EXCL
	}
	f, err := os.OpenFile(file, flag, 0o600)
	if os.IsExist(err) {
		return fmt.Errorf("%s already exists: pass --overwrite to replace it", file)
	}
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("making %s private: %w", file, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
