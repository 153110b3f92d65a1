package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

const planExample = `  # What applying setup.yaml would do in the host cluster: which Deployments roll and why,
  # which Certificates are issued again, for each object and, for a RootShard, its setup
  kubectl kcp-setups plan -f setup.yaml

  # The same from stdin, for a change made by hand
  kubectl get rootshard root -o yaml | sed 's/v0.31.6/v0.32.3/' | kubectl kcp-setups plan -f -`

// previewPrefix starts each line of the server's preview (pkg/preview's Prefix).
const previewPrefix = "preview: "

// setupResources are the kinds a plan previews, by their kind: the setup kinds, whose
// writes the server answers with a preview.
var setupResources = map[string]string{
	"RootShard": "rootshards", "Shard": "shards", "FrontProxy": "frontproxies",
	"CacheServer": "cacheservers", "VirtualWorkspace": "virtualworkspaces",
}

// planOptions are the flags of kubectl kcp-setups plan.
type planOptions struct {
	files        []string
	fieldManager string
}

func newPlanCommand(flags *clientFlags, stdout, stderr io.Writer) *cobra.Command {
	var o planOptions
	cmd := &cobra.Command{
		Use:   "plan -f FILE...",
		Short: "Show what applying setup objects would do in the host cluster",
		Long: `Send each object of the files as a server-side apply dry run and print the server's
preview of it (docs/kcp-versions.md, "Previewing a change"): for each object, which Deployments
and StatefulSets roll and why (image, flags gained and lost, mounts, template), which
Certificates are issued again, and for a RootShard which objects of its setup change with it;
a change of spec.version lists the whole roll in group order. Nothing is written. The apply
is kubectl apply --server-side --force-conflicts's, as field manager kubectl unless
--field-manager says otherwise: fields the file leaves out are kept when another manager set
them. The server caps the list at what one response's warnings carry.`,
		Example: planExample,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{cmd.CommandPath(), fmt.Errorf("plan takes its objects from -f, not as arguments")}
			}
			if len(o.files) == 0 {
				return usageError{cmd.CommandPath(), fmt.Errorf("-f names at least one file, or - for stdin")}
			}
			var objs []*unstructured.Unstructured
			for _, f := range o.files {
				more, err := readObjects(f, cmd.InOrStdin())
				if err != nil {
					return err
				}
				objs = append(objs, more...)
			}
			cc := flags.config()
			cfg, err := cc.ClientConfig()
			if err != nil {
				return err
			}
			ns, _, err := cc.Namespace()
			if err != nil {
				return err
			}
			warnings := &warningLines{}
			cfg.WarningHandler = warnings
			dyn, err := dynamic.NewForConfig(cfg)
			if err != nil {
				return err
			}
			return plan(cmd.Context(), dyn, ns, o.fieldManager, objs, warnings, stdout, stderr)
		},
	}
	cmd.Flags().StringSliceVarP(&o.files, "filename", "f", nil, "A file of objects (YAML or JSON, several separated by ---), - for stdin; repeat it or separate with commas.")
	cmd.Flags().StringVar(&o.fieldManager, "field-manager", "kubectl", "The field manager of the dry-run apply: the one your own applies use.")
	return cmd
}

// readObjects reads the objects of file (- for stdin): the setup kinds of operator.kcp.io.
func readObjects(file string, stdin io.Reader) ([]*unstructured.Unstructured, error) {
	var r io.Reader = stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		err := decoder.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if len(u.Object) == 0 {
			continue // an empty document
		}
		gv, _ := schema.ParseGroupVersion(u.GetAPIVersion())
		if gv.Group != operatorv1alpha1.SchemeGroupVersion.Group || setupResources[u.GetKind()] == "" {
			return nil, fmt.Errorf("%s: %s %q is not a setup kind of %s (RootShard, Shard, FrontProxy, CacheServer, VirtualWorkspace)",
				file, u.GetKind(), u.GetName(), operatorv1alpha1.SchemeGroupVersion.Group)
		}
		if u.GetName() == "" {
			return nil, fmt.Errorf("%s: a %s without metadata.name", file, u.GetKind())
		}
		out = append(out, u)
	}
}

// plan applies each object as a dry run, in order, and prints the preview the server answers
// with under the object's name; other warnings go to stderr, as kubectl prints them.
func plan(ctx context.Context, dyn dynamic.Interface, namespace, fieldManager string, objs []*unstructured.Unstructured,
	warnings *warningLines, stdout, stderr io.Writer) error {
	for i, u := range objs {
		ns := u.GetNamespace()
		if ns == "" {
			ns = namespace
		}
		gvr := operatorv1alpha1.SchemeGroupVersion.WithResource(setupResources[u.GetKind()])
		warnings.take()
		_, err := dyn.Resource(gvr).Namespace(ns).Apply(ctx, u.GetName(), u,
			metav1.ApplyOptions{FieldManager: fieldManager, Force: true, DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return fmt.Errorf("%s %s/%s: %w", u.GetKind(), ns, u.GetName(), err)
		}
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintf(stdout, "%s %s/%s:\n", u.GetKind(), ns, u.GetName())
		said := false
		for _, w := range warnings.take() {
			line, ok := strings.CutPrefix(w, previewPrefix)
			if !ok {
				fmt.Fprintf(stderr, "Warning: %s\n", w)
				continue
			}
			fmt.Fprintf(stdout, "  %s\n", line)
			said = true
		}
		if !said {
			fmt.Fprintln(stdout, "  the server sent no preview: is it a kcp-setups server with its controllers running?")
		}
	}
	return nil
}

// warningLines collects the warnings of the responses, as a rest.WarningHandler.
type warningLines struct {
	mu    sync.Mutex
	lines []string
}

// HandleWarningHeader implements rest.WarningHandler.
func (w *warningLines) HandleWarningHeader(code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, text)
}

// take returns the warnings so far and forgets them.
func (w *warningLines) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.lines
	w.lines = nil
	return out
}
