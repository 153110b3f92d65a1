package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// TestKubeconfigAuthorizationInKcp: a Kubeconfig's spec.authorization binds its ClusterRoles
// in kcp (the double's real RBAC) to the group kubeconfig:<name> its certificate carries:
// the credential can do what the roles grant and only that, a removed role is revoked, and
// deleting the Kubeconfig removes the bindings.
func TestKubeconfigAuthorizationInKcp(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "kubeconfig-authz")
	givenRootShard(t, ns)
	double, admin := startDoubleFor(t, ns)
	for name, rule := range map[string]rbacv1.PolicyRule{
		"namespace-reader": {APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"list"}},
		"shard-reader":     {APIGroups: []string{"core.kcp.io"}, Resources: []string{"shards"}, Verbs: []string{"get", "list"}},
	} {
		_, err := admin.RbacV1().ClusterRoles().Create(t.Context(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
			Rules: []rbacv1.PolicyRule{rule}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	listNamespaces := func(c *kubernetes.Clientset) func() error {
		return func() error { _, err := c.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{}); return err }
	}
	listShards := func(c *kubernetes.Clientset) func() error {
		return func() error {
			return c.CoreV1().RESTClient().Get().AbsPath("/apis/core.kcp.io/v1alpha1/shards").Do(t.Context()).Error()
		}
	}
	listConfigMaps := func(c *kubernetes.Clientset) func() error {
		return func() error {
			_, err := c.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{})
			return err
		}
	}
	bindings := func() []string {
		list, err := admin.RbacV1().ClusterRoleBindings().List(t.Context(), metav1.ListOptions{LabelSelector: "operator.kcp.io/kubeconfig-namespace=" + ns})
		require.NoError(t, err)
		var names []string
		for _, b := range list.Items {
			names = append(names, b.RoleRef.Name)
		}
		slices.Sort(names)
		return names
	}

	// Without authorization, kcp knows the identity and grants it nothing.
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, kubeconfigManifest("team-b", "bob")))
	bob := kubeconfigClient(t, double, ns, "team-b-kubeconfig", "")
	allowed(t, false, "listing namespaces before any binding", listNamespaces(bob))

	withRoles := func(roles ...string) string {
		return kubeconfigManifest("team-b", "bob") + "  authorization:\n    clusterRoleBindings:\n      clusterRoles: [" + strings.Join(roles, ", ") + "]\n"
	}
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, withRoles("namespace-reader", "shard-reader")))
	waitFor(t, ns, "kubeconfig/team-b", operatorv1alpha1.ConditionAuthorizationProvisioned)
	assert.Equal(t, "root", kubectl(t, "get", "kubeconfig", "team-b", "-n", ns, "-o", "jsonpath={.status.authorization.provisionedCluster}"))
	assert.Equal(t, []string{"namespace-reader", "shard-reader"}, bindings())
	bob = kubeconfigClient(t, double, ns, "team-b-kubeconfig", "kubeconfig:"+ns+":team-b")
	allowed(t, true, "listing namespaces (namespace-reader)", listNamespaces(bob))
	allowed(t, true, "listing kcp's shards (shard-reader)", listShards(bob))
	allowed(t, false, "listing configmaps, which no role grants", listConfigMaps(bob))

	// Removing a role revokes what it granted, and only that.
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, withRoles("shard-reader")))
	require.Eventually(t, func() bool { return slices.Equal(bindings(), []string{"shard-reader"}) }, time.Minute, time.Second)
	allowed(t, false, "listing namespaces once namespace-reader is removed", listNamespaces(bob))
	allowed(t, true, "listing kcp's shards (shard-reader)", listShards(bob))

	// Deleting the Kubeconfig removes its bindings before it goes.
	kubectl(t, "delete", "kubeconfig", "team-b", "-n", ns, "--timeout=2m")
	assert.Empty(t, bindings())
	allowed(t, false, "listing kcp's shards once the Kubeconfig is gone", listShards(bob))
}
