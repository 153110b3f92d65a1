package e2e

import (
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kcp-setups/apiserver/test/framework"
)

// shardObject is a kcp Shard named name, at baseURL (empty for none).
func shardObject(name, baseURL string) *unstructured.Unstructured {
	spec := map[string]any{}
	if baseURL != "" {
		spec["baseURL"] = baseURL
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.kcp.io/v1alpha1", "kind": "Shard",
		"metadata": map[string]any{"name": name}, "spec": spec,
	}}
}

// TestKcpDouble proves the kcp double on a RootShard's realized PKI: it serves the
// RootShard's certificate, knows a minted credential's identity and nothing else, enforces
// the RBAC its admin sets for the next request, serves kcp's Shard API under
// /clusters/root, and goes down and comes back on the same address with its data.
func TestKcpDouble(t *testing.T) {
	ns := namespace(t, "kcp-double")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, rootShardManifest("root", "kcp.example.com", 6443)))
	waitFor(t, ns, "rootshard/root", "CertificatesReady")
	// The merged CA bundles are written just after the CAs are issued.
	require.Eventually(t, func() bool {
		_, err := stack.Kubectl(t.Context(), "get", "secret", "root-merged-client-ca", "root-merged-ca-bundle", "-n", ns)
		return err == nil
	}, time.Minute, time.Second)
	double, err := stack.StartKcpDouble(t.Context(), rootShardPKI(t, ns, "root"))
	require.NoError(t, err)
	t.Cleanup(double.Stop)

	// A credential minted by the kubeconfig subresource, for dora in team-d.
	minted, stderr, err := mintAs(t, stack.AdminKubeconfig, ns, "root", `{"spec":{"username":"dora","groups":["team-d"]}}`)
	require.NoError(t, err, stderr)
	doraConfig, err := double.WorkspaceConfigFor("", []byte(minted.Status.Kubeconfig))
	require.NoError(t, err)
	assert.Equal(t, double.URL+"/clusters/root", doraConfig.Host, "the minted kubeconfig's workspace")
	dora, err := kubernetes.NewForConfig(doraConfig)
	require.NoError(t, err)
	_, err = dora.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "GET /clusters/root/api/v1/namespaces before any binding: %v", err)
	assert.Contains(t, err.Error(), `User "dora" cannot list resource "namespaces"`)

	// Identity headers from the caller are not believed, with a certificate or without.
	err = dora.CoreV1().RESTClient().Get().Resource("namespaces").
		SetHeader("X-Remote-User", "admin").SetHeader("X-Remote-Group", "system:masters").Do(t.Context()).Error()
	require.True(t, apierrors.IsForbidden(err), "a forged X-Remote-User: %v", err)
	assert.Contains(t, err.Error(), `User "dora"`)
	anonymous, err := kubernetes.NewForConfig(double.WorkspaceConfig("root", nil, nil, nil))
	require.NoError(t, err)
	err = anonymous.CoreV1().RESTClient().Get().Resource("namespaces").
		SetHeader("X-Remote-User", "admin").SetHeader("X-Remote-Group", "system:masters").Do(t.Context()).Error()
	require.True(t, apierrors.IsForbidden(err), "a forged X-Remote-User without a certificate: %v", err)
	assert.Contains(t, err.Error(), `User "system:anonymous"`)
	_, err = anonymous.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(t.Context())
	require.NoError(t, err, "/clusters/root/readyz is public, as /readyz is (Start waits for it)")

	// A system:masters certificate of another CA (the host cluster's) is refused.
	strangerPath, err := stack.UserKubeconfig("mallory", "system:masters")
	require.NoError(t, err)
	strangerKubeconfig, err := clientcmd.LoadFromFile(strangerPath)
	require.NoError(t, err)
	strangerUser := strangerKubeconfig.AuthInfos[strangerKubeconfig.Contexts[strangerKubeconfig.CurrentContext].AuthInfo]
	stranger, err := kubernetes.NewForConfig(double.WorkspaceConfig("root", strangerUser.ClientCertificateData, strangerUser.ClientKeyData, nil))
	require.NoError(t, err)
	_, err = stranger.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
	require.True(t, apierrors.IsUnauthorized(err), "a client certificate of another CA: %v", err)

	// The admin binds a ClusterRole to dora's group, straight on the backend; the next
	// request through the double is allowed.
	admin, err := kubernetes.NewForConfig(double.AdminConfig())
	require.NoError(t, err)
	_, err = admin.RbacV1().ClusterRoles().Create(t.Context(), &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "shard-keeper"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"list"}},
			{APIGroups: []string{"core.kcp.io"}, Resources: []string{"shards"}, Verbs: []string{"get", "list", "create"}},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.RbacV1().ClusterRoleBindings().Create(t.Context(), &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "team-d-keeps-shards"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "shard-keeper"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "team-d"}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	// kube-apiserver's RBAC reads bindings from an informer: allow it a moment.
	require.Eventually(t, func() bool {
		_, err = dora.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
		return err == nil
	}, 30*time.Second, 200*time.Millisecond, "dora lists namespaces once her group is bound: %v", err)
	err = dora.CoreV1().RESTClient().Delete().Resource("namespaces").Name("default").Do(t.Context()).Error()
	require.True(t, apierrors.IsForbidden(err), "the binding grants what its role says, and only that: %v", err)

	// kcp's Shard API under /clusters/root/apis/core.kcp.io/v1alpha1/shards, with its schema.
	doraDynamic, err := dynamic.NewForConfig(doraConfig)
	require.NoError(t, err)
	shards := doraDynamic.Resource(framework.ShardGVR)
	_, err = shards.Create(t.Context(), shardObject("shard-a", "https://shard-a.example.com:6443"), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = shards.Create(t.Context(), shardObject("no-url", ""), metav1.CreateOptions{})
	require.True(t, apierrors.IsInvalid(err), "spec.baseURL is required: %v", err)
	list, err := shards.List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	assert.Equal(t, "shard-a", list.Items[0].GetName())
	out, stderr, err := stack.KubectlWith(t.Context(), double.AdminKubeconfig, "get", "shards")
	require.NoError(t, err, stderr)
	assert.Regexp(t, `shard-a\s+https://shard-a.example.com:6443`, out, "kubectl on the backend, as its admin")
	_, err = anonymous.CoreV1().RESTClient().Get().AbsPath("/apis/core.kcp.io/v1alpha1/shards").DoRaw(t.Context())
	require.True(t, apierrors.IsForbidden(err), "anonymous lists no Shards: %v", err)

	// Down: the address refuses connections. Up again on it, with the data and the binding.
	url := double.URL
	double.Stop()
	_, err = shards.List(t.Context(), metav1.ListOptions{})
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
	require.NoError(t, double.Start(t.Context()))
	assert.Equal(t, url, double.URL)
	got, err := shards.Get(t.Context(), "shard-a", metav1.GetOptions{})
	require.NoError(t, err, "after Start, through the same config")
	baseURL, _, _ := unstructured.NestedString(got.Object, "spec", "baseURL")
	assert.Equal(t, "https://shard-a.example.com:6443", baseURL)

	// Restart is Stop and Start in one.
	require.NoError(t, double.Restart(t.Context()))
	_, err = dora.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err, "after Restart")
}
