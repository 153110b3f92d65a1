package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
)

const deployDir = "../../artifacts/deploy"

func TestInstallManifestsDryRun(t *testing.T) {
	parallel(t, alone)
	// Another test may delete what an install left in the namespace kcp-setups between
	// kubectl's read and its patch (NotFound): the dry run is asked again then.
	var out string
	require.Eventually(t, func() bool {
		var err error
		out, err = stack.Kubectl(t.Context(), "apply", "--dry-run=server", "-k", deployDir)
		return err == nil
	}, 2*time.Minute, 5*time.Second, "kubectl apply --dry-run=server -k %s: %s", deployDir, out)
	for _, want := range []string{"deployment.apps/kcp-setups", "statefulset.apps/etcd", "apiservice.apiregistration.k8s.io/v1alpha1.operator.kcp.io",
		"certificate.cert-manager.io/kcp-setups-serving", "poddisruptionbudget.policy/kcp-setups", "clusterrole.rbac.authorization.k8s.io/kcp-setups-edit"} {
		assert.Contains(t, out, want)
	}
	rendered := kubectl(t, "kustomize", deployDir)
	assert.NotContains(t, rendered, "insecureSkipTLSVerify", "kube-apiserver always verifies the server")
	assert.Contains(t, rendered, "cert-manager.io/inject-ca-from: kcp-setups/kcp-setups-serving")
}

// manifestArgs are the arguments of the server's container in the install manifests.
func manifestArgs(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(deployDir + "/apiserver.yaml")
	require.NoError(t, err)
	decoder := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var d appsv1.Deployment
		if err := decoder.Decode(&d); err != nil {
			require.FailNow(t, "no Deployment in apiserver.yaml", "%v", err)
		}
		if d.Kind == "Deployment" {
			return d.Spec.Template.Spec.Containers[0].Args
		}
	}
}

// localArgs turns the manifest's arguments into a local process's: it serves on port with the
// stack's certificate, and stores in the stack's etcd, which serves plain HTTP on loopback,
// so the etcd TLS flags go. Every other argument is the manifest's, and kubeconfig stands in
// for the pod's ServiceAccount.
func localArgs(t *testing.T, args []string, port int, kubeconfig string) []string {
	out := stack.ServingArgs(port)
	for _, a := range args {
		flag, _, _ := strings.Cut(a, "=")
		switch flag {
		case "--secure-port", "--tls-cert-file", "--tls-private-key-file", "--etcd-cafile", "--etcd-certfile", "--etcd-keyfile":
		case "--etcd-servers":
			out = append(out, "--etcd-servers="+stack.EtcdURL)
		default:
			out = append(out, a)
		}
	}
	require.Contains(t, args, "--leader-elect-resource-namespace=kcp-setups")
	return append(out, stack.DelegationArgs(kubeconfig)...)
}

// theManifestsRBACIn applies the install manifests' RBAC (rbac.yaml) for the test's duration
// as it reads for a server installed in the namespace ns instead of kcp-setups: the same
// rules and bindings, for the ServiceAccount ns/kcp-setups, with the Lease's Role in ns and
// the names kcp-setups:… of its roles and bindings made ns:…. Each test that runs a server as
// the manifests' ServiceAccount has its own, so that it takes rules away while other tests
// run theirs.
func theManifestsRBACIn(t *testing.T, ns string) {
	t.Helper()
	namespace(t, ns)
	data, err := os.ReadFile(deployDir + "/rbac.yaml")
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "rbac.yaml")
	require.NoError(t, os.WriteFile(file, []byte(inServerNamespace(string(data), ns)), 0o600))
	kubectl(t, "apply", "-f", file)
	t.Cleanup(func() {
		_, _ = stack.Kubectl(context.Background(), "delete", "-f", file, "--ignore-not-found")
	})
}

// inServerNamespace is an RBAC manifest of the install for a server in namespace ns instead
// of kcp-setups (theManifestsRBACIn).
func inServerNamespace(manifest, ns string) string {
	return strings.NewReplacer("kcp-setups:", ns+":", "namespace: kcp-setups\n", "namespace: "+ns+"\n",
		"namespace: kcp-setups}", "namespace: "+ns+"}").Replace(manifest)
}

// leaseIn are a server's arguments with its Lease in namespace ns instead of kcp-setups.
func leaseIn(args []string, ns string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if a == "--leader-elect-resource-namespace=kcp-setups" {
			out[i] = "--leader-elect-resource-namespace=" + ns
		}
	}
	return out
}

// asTheManifestsServiceAccount applies the install manifests' RBAC for a server in namespace
// ns for the test's duration (theManifestsRBACIn), and returns a free port and the arguments
// of a server that runs as their ServiceAccount there, with a kubeconfig of that name.
func asTheManifestsServiceAccount(t *testing.T, name, ns string) (int, []string) {
	t.Helper()
	theManifestsRBACIn(t, ns)
	token := strings.TrimSpace(kubectl(t, "create", "token", "kcp-setups", "-n", ns, "--duration=2h"))
	kubeconfig, err := stack.TokenKubeconfig(name, token)
	require.NoError(t, err)
	port, err := stack.FreePort()
	require.NoError(t, err)
	return port, leaseIn(localArgs(t, manifestArgs(t), port, kubeconfig), ns)
}
