//go:build e2e

package framework_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
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

// TestKcpDouble proves the kcp double on a RootShard's realized PKI: it serves the
// RootShard's certificate, knows a minted credential's identity and nothing else, enforces
// the RBAC its admin sets for the next request, serves kcp's Shard API under
// /clusters/root, and goes down and comes back on the same address with its data.
func TestKcpDouble(t *testing.T) {
	ns := namespace(t, "kcp-double")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, framework.RootShardManifest("root", "kcp.example.com", 6443)))
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
	_, err = shards.Create(t.Context(), framework.ShardObject("shard-a", "https://shard-a.example.com:6443"), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = shards.Create(t.Context(), framework.ShardObject("no-url", ""), metav1.CreateOptions{})
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

// waitFor waits until object in ns has condition.
func waitFor(t *testing.T, ns, object, condition string) {
	t.Helper()
	kubectl(t, "wait", "-n", ns, "--for=condition="+condition, object, "--timeout=3m")
}

// readSecret is the key of the Secret name in ns, or nil.
func readSecret(t *testing.T, ns, name, key string) []byte {
	out, err := stack.Kubectl(t.Context(), "get", "secret", name, "-n", ns, "-o", "jsonpath={.data."+strings.ReplaceAll(key, ".", "\\.")+"}")
	if err != nil {
		return nil
	}
	data, err := base64.StdEncoding.DecodeString(out)
	if err != nil {
		return nil
	}
	return data
}

// rootShardPKI is the realized PKI of the RootShard name in ns, for a stand-in of its kcp.
func rootShardPKI(t *testing.T, ns, name string) framework.StandInOptions {
	t.Helper()
	// The serving certificate is cert-manager's Secret, the bundle that verifies it the
	// server's, written from the server CA's Secret: read them until they agree.
	var o framework.StandInOptions
	var err error
	if !assert.Eventually(t, func() bool {
		o = framework.StandInOptions{
			Name:        ns,
			ServingCert: readSecret(t, ns, name+"-server", "tls.crt"), ServingKey: readSecret(t, ns, name+"-server", "tls.key"),
			ClientCA: readSecret(t, ns, name+"-merged-client-ca", "tls.crt"),
			ServerCA: readSecret(t, ns, name+"-merged-ca-bundle", "tls.crt"), ServerName: "localhost",
		}
		err = o.VerifyServing()
		return err == nil && len(o.ServingKey) > 0 && len(o.ClientCA) > 0
	}, 2*time.Minute, time.Second) {
		t.Fatalf("the realized PKI of the RootShard %s/%s: %v", ns, name, err)
	}
	return o
}

// minted is the part of a kubeconfig subresource's response the test reads.
type minted struct {
	Status struct {
		Kubeconfig string `json:"kubeconfig"`
	} `json:"status"`
}

// mintAs calls the kubeconfig subresource of rootshards/name in ns with kubectl create --raw,
// as the user of kubeconfig, with body.
func mintAs(t *testing.T, kubeconfig, ns, name, body string) (resp minted, stderr string, err error) {
	t.Helper()
	path := "/apis/operator.kcp.io/v1alpha1/namespaces/" + ns + "/rootshards/" + name + "/kubeconfig"
	stdout, stderr, err := stack.KubectlWith(t.Context(), kubeconfig, "create", "--raw", path, "-f", writeManifest(t, body))
	if err != nil {
		return resp, stderr, err
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &resp), stdout)
	return resp, stderr, nil
}
