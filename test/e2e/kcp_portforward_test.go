package e2e

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"slices"
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
	"github.com/kcp-setups/apiserver/test/framework"
)

// TestServerReachesKcpByPortForward proves the path the controllers take into kcp from a
// server outside the host cluster: a port-forward through kube-apiserver to a ready pod of
// the RootShard (kwok forwards its port to the kcp double), TLS end to end verified for the
// Service's DNS name, and the server's own identity, <rs>-kcp-operator, which kcp treats as
// an admin (system:kcp:admin) while the pods' identities are never handed to the server.
func TestServerReachesKcpByPortForward(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "kcp-reach")
	givenRootShard(t, ns)
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

// startDoubleFor starts a kcp double serving the RootShard root of ns (and whatever else
// ServeAs adds) and makes the namespace's kcp pods lead to it. With one shard, the double
// also serves as the RootShard's internal front proxy (root-proxy, with its realized serving
// certificate), which the server reaches workspaces through: a proxy in front of one shard
// that hosts every workspace. TestKubeconfigAuthorizationOnAnotherShard runs the proxy
// apart, in front of two shards.
func startDoubleFor(t *testing.T, ns string) (*framework.KcpDouble, *kubernetes.Clientset) {
	t.Helper()
	double, err := stack.StartKcpDouble(t.Context(), rootShardPKI(t, ns, "root"))
	require.NoError(t, err)
	t.Cleanup(double.Stop)
	require.Eventually(t, func() bool {
		return len(readSecret(t, stack, ns, "root-proxy-server", "tls.key")) > 0
	}, 2*time.Minute, time.Second, "the root shard proxy's serving certificate is issued")
	require.NoError(t, double.ServeAs(decodeSecret(t, ns, "root-proxy-server", "tls.crt"), decodeSecret(t, ns, "root-proxy-server", "tls.key")))
	unforward, err := double.ForwardPods(t.Context(), ns)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unforward(context.Background()) })
	admin, err := kubernetes.NewForConfig(double.AdminConfig())
	require.NoError(t, err)
	return double, admin
}

// kubeconfigClient is a client of the double as the credential in the Kubeconfig's Secret,
// once that credential carries group (empty: any).
func kubeconfigClient(t *testing.T, double *framework.KcpDouble, ns, secret, group string) *kubernetes.Clientset {
	t.Helper()
	var data []byte
	require.Eventually(t, func() bool {
		// The Secret may not be written yet: that is what this waits for.
		b64, err := stack.Kubectl(t.Context(), "get", "secret", secret, "-n", ns, "-o", "jsonpath={.data.kubeconfig}")
		if err != nil {
			return false
		}
		if data, err = base64.StdEncoding.DecodeString(b64); err != nil {
			return false
		}
		if group == "" {
			return len(data) > 0
		}
		cfg, err := clientcmd.Load(data)
		if err != nil {
			return false
		}
		for _, user := range cfg.AuthInfos {
			block, _ := pem.Decode(user.ClientCertificateData)
			if block == nil {
				return false
			}
			cert, err := x509.ParseCertificate(block.Bytes)
			return err == nil && slices.Contains(cert.Subject.Organization, group)
		}
		return false
	}, 2*time.Minute, time.Second, "the Kubeconfig's credential carries %q", group)
	cfg, err := double.WorkspaceConfigFor("root", data)
	require.NoError(t, err)
	client, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	return client
}

// allowed waits until what try does is allowed (want) or forbidden (!want): kube-apiserver's
// RBAC follows bindings through an informer.
func allowed(t *testing.T, want bool, what string, try func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if err = try(); (want && err == nil) || (!want && apierrors.IsForbidden(err)) {
			return
		}
	}
	t.Fatalf("%s: want allowed=%v, last error %v", what, want, err)
}
