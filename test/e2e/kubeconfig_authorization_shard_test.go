package e2e

import (
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/test/framework"
)

// twoShards is a kcp of two shards for the RootShard root and the Shard shard-1 of a
// namespace: a kcp double for each, hosting only its own workspaces and refusing the other's
// as kcp does, and the RootShard's realized internal front proxy run by a front proxy double
// from its Deployment, all behind one SNI router that the namespace's pods lead to.
type twoShards struct {
	root, shard *framework.KcpDouble
	proxy       *framework.FrontProxyDouble
}

// serviceName is the cluster DNS name of a Service of ns, which the server dials.
func serviceName(service, ns string) string { return service + "." + ns + ".svc.cluster.local" }

// startTwoShards starts the kcp of root (hosting rootWorkspaces) and shard-1 (hosting
// shardWorkspaces) in ns, both Available, and registers both in kcp's root workspace.
func startTwoShards(t *testing.T, ns string, rootWorkspaces, shardWorkspaces []string) twoShards {
	t.Helper()
	root, err := stack.StartKcpDouble(t.Context(), rootShardPKI(t, ns, "root"))
	require.NoError(t, err)
	t.Cleanup(root.Stop)
	shardPKI := rootShardPKI(t, ns, "root")
	shardPKI.Name = ns + "-shard-1"
	shardPKI.ServingCert, shardPKI.ServingKey = decodeSecret(t, ns, "shard-1-server", "tls.crt"), decodeSecret(t, ns, "shard-1-server", "tls.key")
	require.NoError(t, shardPKI.VerifyServing())
	shard, err := stack.StartKcpDouble(t.Context(), shardPKI)
	require.NoError(t, err)
	t.Cleanup(shard.Stop)
	root.HostOnly(rootWorkspaces...)
	shard.HostOnly(shardWorkspaces...)

	// Each shard trusts front proxies as its realized Deployment says: the request-header CA
	// and allowed names of its command line.
	for deployment, double := range map[string]*framework.KcpDouble{"root-kcp": root, "shard-1-shard-kcp": shard} {
		args, files, err := stack.PodFiles(t.Context(), ns, deployment)
		require.NoError(t, err)
		ca := files[flagValue(t, args, "--requestheader-client-ca-file")]
		require.NotEmpty(t, ca, "%s mounts its request-header CA", deployment)
		require.NoError(t, double.AcceptProxy(ca, strings.Split(flagValue(t, args, "--requestheader-allowed-names"), ",")...))
	}

	// kcp's Shard objects in root, as each shard registers itself.
	admin, err := dynamic.NewForConfig(root.AdminConfig())
	require.NoError(t, err)
	for name, service := range map[string]string{"root": "root-kcp", "shard-1": "shard-1-shard-kcp"} {
		_, err := admin.Resource(framework.ShardGVR).Create(t.Context(), shardObject(name, "https://"+serviceName(service, ns)+":6443"), metav1.CreateOptions{})
		require.NoError(t, err)
	}

	router, err := framework.StartSNIRouter()
	require.NoError(t, err)
	t.Cleanup(router.Stop)
	router.Route(serviceName("root-kcp", ns), root.Addr())
	router.Route(serviceName("shard-1-shard-kcp", ns), shard.Addr())

	// The internal front proxy, as realized: its command line and mounted files.
	kubectl(t, "wait", "-n", ns, "--for=condition=Available", "deployment/root-proxy", "--timeout=2m")
	args, files, err := stack.PodFiles(t.Context(), ns, "root-proxy")
	require.NoError(t, err)
	index := map[string]string{}
	for _, ws := range rootWorkspaces {
		index[ws] = "root"
	}
	for _, ws := range shardWorkspaces {
		index[ws] = "shard-1"
	}
	dialer := net.Dialer{Timeout: 10 * time.Second}
	proxy, err := framework.StartFrontProxyDouble(framework.FrontProxyDoubleOptions{Args: args, Files: files, Index: index,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, router.Addr)
		}})
	require.NoError(t, err)
	t.Cleanup(proxy.Stop)
	router.Route(serviceName("root-proxy", ns), proxy.Addr)

	unforward, err := stack.ForwardPodsTo(t.Context(), ns, router.Addr, "kcp-router-"+ns)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unforward(context.Background()) })
	return twoShards{root: root, shard: shard, proxy: proxy}
}

// flagValue is the value of --name=value in args.
func flagValue(t *testing.T, args []string, name string) string {
	t.Helper()
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	t.Fatalf("no %s in %v", name, args)
	return ""
}

// TestKubeconfigAuthorizationOnAnotherShard: a Kubeconfig's authorization targets a workspace
// that the second shard hosts. The root shard refuses that workspace ("Not found on this
// shard", as kcp does), so the ClusterRoleBinding can only get there through the RootShard's
// realized internal front proxy, which sends it to the shard; the credential is then allowed
// what the role grants on that shard, and deleting the Kubeconfig removes the binding there.
// Shard registration (KcpReady) and deregistration keep working next to it.
func TestKubeconfigAuthorizationOnAnotherShard(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "kcp-proxy")
	givenRootShard(t, ns)
	givenShard(t, ns)
	const workspace = "root:team-b"
	kcp := startTwoShards(t, ns, []string{"root"}, []string{workspace})

	// The stand-in is honest: the root shard refuses the workspace of the other shard, even
	// to the server's own admin identity.
	operatorCert, operatorKey := decodeSecret(t, ns, "root-kcp-operator", "tls.crt"), decodeSecret(t, ns, "root-kcp-operator", "tls.key")
	direct := kcp.root.WorkspaceConfig(workspace, operatorCert, operatorKey, nil)
	directHTTP, err := rest.HTTPClientFor(direct)
	require.NoError(t, err)
	resp, err := directHTTP.Get(direct.Host + "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "the root shard does not serve %s", workspace)
	assert.Contains(t, string(body), "Not found on this shard")

	shardAdmin, err := kubernetes.NewForConfig(kcp.shard.AdminConfig())
	require.NoError(t, err)
	rootAdmin, err := kubernetes.NewForConfig(kcp.root.AdminConfig())
	require.NoError(t, err)
	_, err = shardAdmin.RbacV1().ClusterRoles().Create(t.Context(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "namespace-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"list"}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	bindingsOn := func(c *kubernetes.Clientset) []string {
		list, err := c.RbacV1().ClusterRoleBindings().List(t.Context(), metav1.ListOptions{LabelSelector: "operator.kcp.io/kubeconfig-namespace=" + ns})
		require.NoError(t, err)
		var names []string
		for _, b := range list.Items {
			names = append(names, b.Name+" "+b.RoleRef.Name)
		}
		slices.Sort(names)
		return names
	}

	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, `apiVersion: operator.kcp.io/v1alpha1
kind: Kubeconfig
metadata:
  name: team-b
spec:
  target: {rootShardRef: {name: root}}
  targetWorkspace: `+workspace+`
  username: bob
  validity: 24h
  secretRef: {name: team-b-kubeconfig}
  authorization:
    clusterRoleBindings:
      clusterRoles: [namespace-reader]
`))
	waitFor(t, ns, "kubeconfig/team-b", operatorv1alpha1.ConditionAuthorizationProvisioned)
	assert.Equal(t, workspace, kubectl(t, "get", "kubeconfig", "team-b", "-n", ns, "-o", "jsonpath={.status.authorization.provisionedCluster}"))
	assert.Equal(t, []string{"kcp-setups:kubeconfig:" + ns + ":team-b:namespace-reader namespace-reader"}, bindingsOn(shardAdmin),
		"the binding is on the shard that hosts %s", workspace)
	assert.Empty(t, bindingsOn(rootAdmin), "and not on the root shard")

	// The credential is allowed what the role grants, on the shard that hosts the workspace.
	// Once the Secret's credential carries the Kubeconfig's group.
	_ = kubeconfigClient(t, kcp.shard, ns, "team-b-kubeconfig", "kubeconfig:"+ns+":team-b")
	bobConfig, err := kcp.shard.WorkspaceConfigFor(workspace, []byte(decodeSecretKubeconfig(t, ns, "team-b-kubeconfig")))
	require.NoError(t, err)
	bob, err := kubernetes.NewForConfig(bobConfig)
	require.NoError(t, err)
	allowed(t, true, "listing namespaces in "+workspace, func() error {
		_, err := bob.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
		return err
	})

	// KcpReady of both shards, from each shard and kcp's Shard objects in root.
	waitFor(t, ns, "rootshard/root", operatorv1alpha1.ConditionKcpReady)
	waitFor(t, ns, "shard/shard-1", operatorv1alpha1.ConditionKcpReady)

	// Deleting the Kubeconfig removes the binding on the shard, through the proxy.
	kubectl(t, "delete", "kubeconfig", "team-b", "-n", ns, "--timeout=2m")
	assert.Empty(t, bindingsOn(shardAdmin))

	// Deregistration: kcp's Shard object in root goes before the Shard.
	kubectl(t, "delete", "shard", "shard-1", "-n", ns, "--timeout=3m")
	rootDynamic, err := dynamic.NewForConfig(kcp.root.AdminConfig())
	require.NoError(t, err)
	_, err = rootDynamic.Resource(framework.ShardGVR).Get(t.Context(), "shard-1", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "kcp's Shard object is deleted: %v", err)
}

// decodeSecretKubeconfig is the kubeconfig file of a Kubeconfig's Secret.
func decodeSecretKubeconfig(t *testing.T, ns, secret string) string {
	t.Helper()
	return string(decodeSecret(t, ns, secret, "kubeconfig"))
}
