package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	sigsyaml "sigs.k8s.io/yaml"
)

// TestNamespacedManifestRBACIsSufficientAndMinimal runs the server as the namespaced
// install's ServiceAccount (artifacts/deploy-namespaced): the base RBAC, the ClusterRole
// without any rule on a namespaced resource, its Role and RoleBinding in every namespace the
// test uses, and the Deployment's arguments with --watch-namespaces naming those
// namespaces. It serves, realizes, mints and prunes; and without any one rule of the
// ClusterRole, the Lease's Role or the namespace's Role, something named breaks.
func TestNamespacedManifestRBACIsSufficientAndMinimal(t *testing.T) {
	parallel(t, alone)
	rendered := objectsOf(t, kubectl(t, "kustomize", namespacedDeployDir))
	clusterRole := rendered["rbac.authorization.k8s.io/v1/ClusterRole/<nil>/kcp-setups:apiserver"]
	require.NotNil(t, clusterRole)
	var rules struct {
		Rules []rbacv1.PolicyRule `json:"rules"`
	}
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(clusterRole, &rules))
	deployment := rendered["apps/v1/Deployment/kcp-setups/kcp-setups"]
	require.NotNil(t, deployment)
	var args []string
	for _, a := range deployment["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["args"].([]any) {
		args = append(args, a.(string))
	}
	require.Contains(t, args, "--watch-namespaces=kcp", "the namespaced install serves the namespaces its Roles are in")
	// The test's own namespaces are served instead of kcp.
	var kept []string
	for _, a := range args {
		if !strings.HasPrefix(a, "--watch-namespaces=") {
			kept = append(kept, a)
		}
	}

	// The base RBAC, with the namespaced install's ClusterRole.
	const serverNS = "namespaced-rbac-server"
	theManifestsRBACIn(t, serverNS)
	rbac := stack.Kube.RbacV1()
	role, err := rbac.ClusterRoles().Get(t.Context(), serverNS+":apiserver", metav1.GetOptions{})
	require.NoError(t, err)
	role.Rules = rules.Rules
	_, err = rbac.ClusterRoles().Update(t.Context(), role, metav1.UpdateOptions{})
	require.NoError(t, err)
	roles, err := os.ReadFile(namespacedDeployDir + "/roles.yaml")
	require.NoError(t, err)
	require.Contains(t, string(roles), "  namespace: kcp\n")
	namespacedRole := func(t *testing.T, ns string) {
		t.Helper()
		in := strings.ReplaceAll(inServerNamespace(string(roles), serverNS), "  namespace: kcp\n", "  namespace: "+ns+"\n")
		for _, doc := range strings.Split(in, "\n---\n") {
			var obj map[string]any
			require.NoError(t, sigsyaml.Unmarshal([]byte(doc), &obj))
			require.Equal(t, ns, obj["metadata"].(map[string]any)["namespace"], "every object of roles.yaml is in the served namespace")
		}
		file := filepath.Join(t.TempDir(), "roles.yaml")
		require.NoError(t, os.WriteFile(file, []byte(in), 0o600))
		kubectl(t, "apply", "-f", file)
	}

	token := strings.TrimSpace(kubectl(t, "create", "token", "kcp-setups", "-n", serverNS, "--duration=2h"))
	kubeconfig, err := stack.TokenKubeconfig("kcp-setups-namespaced-sa", token)
	require.NoError(t, err)
	port, err := stack.FreePort()
	require.NoError(t, err)
	serverRBACIsSufficientAndMinimal(t, "namespaced-rbac", port, leaseIn(localArgs(t, kept, port, kubeconfig), serverNS), namespacedRole)
}
