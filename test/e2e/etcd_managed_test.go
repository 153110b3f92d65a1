package e2e

import (
	"context"
	"crypto/x509"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kcp-setups/apiserver/test/framework"
)

// managedEtcdSetup is a RootShard and a Shard without spec.etcd, written as a user would, and
// a second RootShard whose etcd client CA is a stranger's to the first one's etcd. The Shard
// asks for its etcd's volumes to go with it, and skips deregistration: no kcp runs here.
const managedEtcdSetup = `apiVersion: operator.kcp.io/v1alpha1
kind: RootShard
metadata:
  name: root
spec:
  external:
    hostname: kcp.example.com
    port: 6443
---
apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: east
  annotations:
    operator.kcp.io/delete-etcd-volumes: "true"
    operator.kcp.io/skip-kcp-cleanup: "true"
spec:
  rootShard:
    ref:
      name: root
---
apiVersion: operator.kcp.io/v1alpha1
kind: RootShard
metadata:
  name: other
spec:
  external:
    hostname: other.example.com
    port: 6443
  etcd:
    managed:
      replicas: 1
`

// TestManagedEtcd is issue 14 end to end: a RootShard and a Shard without etcd get a TLS etcd
// cluster each, whose certificates chain to the RootShard's etcd CAs; the realized members,
// run for real, form a cluster that only kcp's client certificate may use; EtcdReady follows
// etcd's own health through the server's port-forward dialer; both reach Running with kcp
// pointed at their members; deleting keeps the volumes unless the owner says otherwise.
func TestManagedEtcd(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "managed-etcd")
	// No volume is made ahead: the stack's default StorageClass provisions the members' claims,
	// as a cluster's does.
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, managedEtcdSetup))

	assert.Equal(t, `{"replicas":3,"storage":{"size":"8Gi"}}`,
		kubectl(t, "get", "rootshard/root", "-n", ns, "-o", "jsonpath={.spec.etcd.managed}"), "an omitted etcd is a managed one, defaulted")

	waitFor(t, ns, "rootshard/root", "CertificatesReady")
	waitFor(t, ns, "shard/east", "CertificatesReady")
	waitFor(t, ns, "rootshard/other", "CertificatesReady")

	t.Run("CertificatesChain", func(t *testing.T) {
		root := secretCert(t, ns, "root-ca")
		clientCA, peerCA := secretCert(t, ns, "root-etcd-client-ca"), secretCert(t, ns, "root-etcd-peer-ca")
		for _, base := range []string{"root", "east-shard"} {
			server := secretCert(t, ns, base+"-etcd-server")
			verifyChain(t, server, clientCA, root, x509.ExtKeyUsageServerAuth)
			verifyChain(t, secretCert(t, ns, base+"-etcd-client"), clientCA, root, x509.ExtKeyUsageClientAuth)
			peer := secretCert(t, ns, base+"-etcd-peer")
			verifyChain(t, peer, peerCA, root, x509.ExtKeyUsageServerAuth)
			verifyChain(t, peer, peerCA, root, x509.ExtKeyUsageClientAuth)
			for i := range 3 {
				member := fmt.Sprintf("%s-etcd-%d.%s-etcd-peers.%s.svc.cluster.local", base, i, base, ns)
				assert.Contains(t, server.DNSNames, member)
				assert.Contains(t, peer.DNSNames, member)
			}
			assert.Contains(t, server.DNSNames, fmt.Sprintf("%s-etcd.%s.svc.cluster.local", base, ns), "the client Service")
			assert.Contains(t, server.DNSNames, "localhost")
		}
	})

	rootMembers := runRealizedEtcd(t, ns, "root-etcd")
	eastMembers := runRealizedEtcd(t, ns, "east-shard-etcd")

	// EtcdReady is etcd's own answer, through the port-forward dialer to the pods, which kwok
	// leads to the members.
	waitForReason(t, ns, "rootshard/root", "EtcdReady", "True", "Healthy")
	waitForReason(t, ns, "shard/east", "EtcdReady", "True", "Healthy")
	for _, o := range []string{"rootshard/root", "shard/east"} {
		kubectl(t, "wait", "-n", ns, "--for=jsonpath={.status.phase}=Running", o, "--timeout=3m")
	}
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		claims, err := stack.Kube.CoreV1().PersistentVolumeClaims(ns).List(t.Context(), metav1.ListOptions{})
		require.NoError(c, err)
		assert.Len(c, claims.Items, 3+3+1, "a claim per member")
		for _, pvc := range claims.Items {
			assert.Equal(c, framework.StorageClass, ptr.Deref(pvc.Spec.StorageClassName, ""), "%s has the default class", pvc.Name)
			assert.Equal(c, corev1.ClaimBound, pvc.Status.Phase, "the stack's provisioner gave %s a volume", pvc.Name)
		}
	}, 2*time.Minute, time.Second)

	t.Run("KcpUsesItsMembers", func(t *testing.T) {
		for _, c := range []struct{ deployment, base string }{{"root-kcp", "root"}, {"east-shard-kcp", "east-shard"}} {
			d := deployment(t, ns, c.deployment)
			var urls []string
			for i := range 3 {
				urls = append(urls, fmt.Sprintf("https://%s-etcd-%d.%s-etcd-peers.%s.svc.cluster.local:2379", c.base, i, c.base, ns))
			}
			args := d.Spec.Template.Spec.Containers[0].Args
			assert.Contains(t, args, "--etcd-servers="+strings.Join(urls, ","))
			assert.Contains(t, args, "--etcd-certfile=/etc/etcd/tls/tls.crt")
			assert.Equal(t, c.base+"-etcd-client", volumeAt(t, d.Spec.Template.Spec, "/etc/etcd/tls").Secret.SecretName)
		}
	})

	t.Run("AClusterOnlyKcpMayUse", func(t *testing.T) {
		client, foreign := hostSecret(t, ns, "root-etcd-client"), hostSecret(t, ns, "other-etcd-client")
		AssertEtcdCluster(t, rootMembers, &client, &foreign)
	})

	t.Run("EtcdReadyFollowsEtcd", func(t *testing.T) {
		// Without quorum, etcd's /health says so; or, when the pod the dialer picks is one
		// whose member is down, etcd does not answer at all.
		eastMembers.Kill(1)
		eastMembers.Kill(2)
		waitForReason(t, ns, "shard/east", "EtcdReady", "False", "Unhealthy", "EtcdUnreachable")
		require.NoError(t, eastMembers.Start(t.Context(), 1))
		require.NoError(t, eastMembers.Start(t.Context(), 2))
		waitForReason(t, ns, "shard/east", "EtcdReady", "True", "Healthy")
	})

	t.Run("DeletionKeepsTheDataUnlessAsked", func(t *testing.T) {
		kubectl(t, "delete", "-n", ns, "shard/east", "rootshard/root", "--timeout=3m")
		for _, sts := range []string{"root-etcd", "east-shard-etcd"} {
			_, err := stack.Kube.AppsV1().StatefulSets(ns).Get(t.Context(), sts, metav1.GetOptions{})
			assert.True(t, apierrors.IsNotFound(err), "the StatefulSet %s goes with its owner: %v", sts, err)
		}
		for _, secret := range []string{"root-etcd-server", "east-shard-etcd-client", "root-etcd-client-ca"} {
			_, err := stack.Kube.CoreV1().Secrets(ns).Get(t.Context(), secret, metav1.GetOptions{})
			assert.True(t, apierrors.IsNotFound(err), "the Secret %s goes with its owner: %v", secret, err)
		}
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			claims, err := stack.Kube.CoreV1().PersistentVolumeClaims(ns).List(t.Context(), metav1.ListOptions{})
			require.NoError(c, err)
			var live []string
			for _, pvc := range claims.Items {
				if pvc.DeletionTimestamp == nil {
					live = append(live, pvc.Name)
				}
			}
			slices.Sort(live)
			assert.Equal(c, []string{"data-other-etcd-0", "data-root-etcd-0", "data-root-etcd-1", "data-root-etcd-2"}, live,
				"the root shard's claims stay; the shard's, whose owner asked, go")
		}, 2*time.Minute, time.Second)
	})
}

// runRealizedEtcd runs the members of the StatefulSet name as the server realized it, with
// the Secrets it mounts as they are in the host cluster, and leads its pods' ports to them.
func runRealizedEtcd(t *testing.T, ns, name string) *framework.EtcdMembers {
	t.Helper()
	var sts *appsv1.StatefulSet
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var err error
		sts, err = stack.Kube.AppsV1().StatefulSets(ns).Get(t.Context(), name, metav1.GetOptions{})
		require.NoError(c, err)
	}, 3*time.Minute, time.Second, "the StatefulSet %s is created once its certificates are issued", name)
	// Every Secret the pods mount, as cert-manager and the server wrote them.
	mounted := map[string]*corev1.Secret{}
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			secret := hostSecret(t, ns, v.Secret.SecretName)
			mounted[v.Secret.SecretName] = &secret
		}
	}
	members, err := stack.RunEtcdMembers(t.Context(), sts, mounted)
	require.NoError(t, err)
	t.Cleanup(members.Stop)
	unforward, err := members.ForwardMembers(t.Context(), stack)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unforward(context.Background()) })
	return members
}
