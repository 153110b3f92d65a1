package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/kcpclient"
)

// TestServerReachesKcpByPortForward proves the path the controllers take into kcp from a
// server outside the host cluster: a port-forward through kube-apiserver to a ready pod of
// the RootShard (kwok forwards its port to the kcp double), TLS end to end verified for the
// Service's DNS name, and the server's own identity, <rs>-kcp-operator, which kcp treats as
// an admin (system:kcp:admin) while the pods' identities are never handed to the server.
func TestServerReachesKcpByPortForward(t *testing.T) {
	ns := namespace(t, "kcp-reach")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, rootShardManifest("root", "kcp.example.com", 6443)))
	waitFor(t, ns, "rootshard/root", "Available")
	double, err := stack.StartKcpDouble(t.Context(), rootShardPKI(t, ns, "root"))
	require.NoError(t, err)
	t.Cleanup(double.Stop)
	unforward, err := double.ForwardPods(t.Context(), ns)
	require.NoError(t, err)

	host, err := clientcmd.BuildConfigFromFlags("", stack.AdminKubeconfig)
	require.NoError(t, err)
	dialer, err := kcpclient.New(kcpclient.PortForwardDialer, host)
	require.NoError(t, err)
	kube, err := kubernetes.NewForConfig(host)
	require.NoError(t, err)
	secrets := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	list, err := kube.CoreV1().Secrets(ns).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	for i := range list.Items {
		require.NoError(t, secrets.Add(&list.Items[i]))
	}
	clients := kcpclient.NewClients(dialer, corev1listers.NewSecretLister(secrets))
	rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: ns}}
	rs.Spec.External.Hostname = "kcp.example.com"

	cfg, err := clients.RootShard(rs, "root")
	require.NoError(t, err)
	assert.Equal(t, "https://root-kcp."+ns+".svc.cluster.local:6443/clusters/root", cfg.Host)
	admin, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	_, err = admin.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err, "the server's identity is an admin in kcp")
	base, err := clients.RootShard(rs, "")
	require.NoError(t, err)
	baseClient, err := kubernetes.NewForConfig(base)
	require.NoError(t, err)
	body, err := baseClient.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "ok", string(body))

	// Without the forward, the pod's port leads nowhere: the call fails, it does not hang.
	require.NoError(t, unforward(t.Context()))
	require.Eventually(t, func() bool {
		fresh := kcpclient.NewClients(dialer, corev1listers.NewSecretLister(secrets))
		c, cerr := fresh.RootShard(rs, "root")
		require.NoError(t, cerr)
		k, kerr := kubernetes.NewForConfig(c)
		require.NoError(t, kerr)
		_, err = k.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
		return err != nil && !apierrors.IsForbidden(err)
	}, time.Minute, time.Second)
	t.Logf("with no forward: %v", err)
}
