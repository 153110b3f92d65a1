package e2e

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
)

const deployDir = "../../artifacts/deploy"

func TestInstallManifestsDryRun(t *testing.T) {
	t.Parallel()
	out := kubectl(t, "apply", "--dry-run=server", "-k", deployDir)
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

// manifestsRBAC is held by the tests that run a server as the install manifests'
// ServiceAccount: they apply and delete the manifests' RBAC, change the rules of its
// ClusterRole kcp-setups:apiserver and lead on its Lease kcp-setups/kcp-setups-controllers, so
// they run one at a time, in parallel with the other tests.
var manifestsRBAC sync.Mutex

// holdTheManifestsRBAC holds manifestsRBAC until the test and its cleanups are done.
func holdTheManifestsRBAC(t *testing.T) {
	t.Helper()
	manifestsRBAC.Lock()
	t.Cleanup(manifestsRBAC.Unlock)
}

// asTheManifestsServiceAccount applies the install manifests' RBAC for the test's duration
// and returns a free port and the arguments of a server that runs as their ServiceAccount,
// with a kubeconfig of that name.
func asTheManifestsServiceAccount(t *testing.T, name string) (int, []string) {
	t.Helper()
	kubectl(t, "apply", "-f", deployDir+"/rbac.yaml")
	t.Cleanup(func() {
		_, _ = stack.Kubectl(context.Background(), "delete", "-f", deployDir+"/rbac.yaml", "--ignore-not-found")
	})
	token := strings.TrimSpace(kubectl(t, "create", "token", "kcp-setups", "-n", "kcp-setups", "--duration=2h"))
	kubeconfig, err := stack.TokenKubeconfig(name, token)
	require.NoError(t, err)
	port, err := stack.FreePort()
	require.NoError(t, err)
	return port, localArgs(t, manifestArgs(t), port, kubeconfig)
}
