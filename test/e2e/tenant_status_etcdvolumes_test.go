package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// statusWriterRole grants sam get and patch on rootshards/status alone.
const statusWriterRole = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: rootshards-status-writer
rules:
- apiGroups: [operator.kcp.io]
  resources: [rootshards/status]
  verbs: [get, patch]
`

// etcdVolumesRootShard is a RootShard with a managed etcd of three members, whose claims are
// data-data-etcd-0 to data-data-etcd-2.
const etcdVolumesRootShard = `apiVersion: operator.kcp.io/v1alpha1
kind: RootShard
metadata:
  name: data
spec:
  external:
    hostname: kcp.example.com
    port: 6443
  etcd:
    managed:
      replicas: 3
`

// TestStatusAndEtcdVolumesAreHeldToRights is issue 38's items 2 and 4 through kubectl and
// real RBAC. sam, who may only get and patch rootshards/status, writes the adopt and
// delete-etcd-volumes annotations and drops the finalizers through --subresource=status:
// nothing of it is stored; he takes the controllers' step of a rotation, or excludes a member
// through the status: 403. eve, with kcp-setups-edit, annotates delete-etcd-volumes: 403
// naming the annotation and the right, and nothing stored. The admin may, and deleting the
// RootShard then deletes exactly its own etcd claim, not a claim of its etcd's names left by
// another owner UID, nor a claim that merely carries its labels. What the status subresource
// refuses or keeps whoever writes (a status write that is no rotation step, a recorded
// TakenOver) is the integration tier's TestStatusWriteRules.
func TestStatusAndEtcdVolumesAreHeldToRights(t *testing.T) {
	parallel(t, sharedRoles)
	withSelfServiceRoles(t)
	ns := namespace(t, "tenant-status")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, statusWriterRole))
	kubectl(t, "create", "rolebinding", "status-writer", "-n", ns, "--role=rootshards-status-writer", "--user=sam")
	kubectl(t, "create", "rolebinding", "setups", "-n", ns, "--clusterrole=kcp-setups-edit", "--user=eve")

	// Claims made ahead of the RootShard: member 0's, as a deleted RootShard of the same name
	// left it (its owner UID another's), which the StatefulSet takes as its volume; and one
	// that only carries the etcd's labels, which anyone who may label a claim can set.
	leftover := etcdClaim("data-data-etcd-0", map[string]string{"operator.kcp.io/owner-uid": "a-deleted-rootshard"})
	lookalike := etcdClaim("scratch", nil)
	for _, pvc := range []*corev1.PersistentVolumeClaim{leftover, lookalike} {
		_, err := stack.Kube.CoreV1().PersistentVolumeClaims(ns).Create(t.Context(), pvc, metav1.CreateOptions{})
		require.NoError(t, err)
	}

	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, etcdVolumesRootShard))
	require.Eventually(t, func() bool {
		out, err := stack.Kubectl(t.Context(), "get", "rootshard/data", "-n", ns, "-o", "jsonpath={.metadata.finalizers}")
		return err == nil && strings.Contains(out, "operator.kcp.io/rootshard-cleanup")
	}, 2*time.Minute, time.Second, "the controllers hold the RootShard")
	uid := kubectl(t, "get", "rootshard/data", "-n", ns, "-o", "jsonpath={.metadata.uid}")
	stored := func() string {
		return kubectl(t, "get", "rootshard/data", "-n", ns, "-o", "jsonpath={.metadata.annotations} {.metadata.finalizers}")
	}
	before := stored()

	sam, err := stack.UserKubeconfig("sam")
	require.NoError(t, err)
	eve, err := stack.UserKubeconfig("eve")
	require.NoError(t, err)
	as := func(kubeconfig string, args ...string) (string, error) {
		_, stderr, err := stack.KubectlWith(t.Context(), kubeconfig, append(args, "-n", ns)...)
		return stderr, err
	}
	require.Eventually(t, func() bool {
		out, _, _ := stack.KubectlWith(t.Context(), sam, "auth", "can-i", "patch", "rootshards.operator.kcp.io/data", "--subresource=status", "-n", ns)
		return strings.TrimSpace(out) == "yes"
	}, time.Minute, time.Second, "the bindings reach the authorizer")

	t.Run("StatusWritesStoreNoMetadata", func(t *testing.T) {
		for _, patch := range []struct{ kind, body string }{
			{"merge", `{"metadata":{"annotations":{"operator.kcp.io/adopt":"anything","operator.kcp.io/delete-etcd-volumes":"true"}}}`},
			{"merge", `{"metadata":{"finalizers":null}}`},
			{"json", `[{"op":"remove","path":"/metadata/finalizers"}]`},
		} {
			out, err := as(sam, "patch", "rootshard/data", "--subresource=status", "--type="+patch.kind, "-p", patch.body)
			require.NoError(t, err, "the status endpoint takes the write: %s", out)
			assert.Equal(t, before, stored(), "nothing of %s is stored", patch.body)
		}
		out, err := as(sam, "patch", "rootshard/data", "--type=merge", "-p", `{"metadata":{"annotations":{"operator.kcp.io/adopt":"anything"}}}`)
		require.Error(t, err, "sam may not patch the RootShard itself")
		assert.Contains(t, out, "Forbidden")
	})

	t.Run("RotationPhasesAreNotAStatusWritersToMove", func(t *testing.T) {
		// The admin starts the client CA's rotation; it stays Preparing, since the managed
		// etcd runs no members here and the RootShard never becomes Available.
		kubectl(t, "create", "--raw", "/apis/operator.kcp.io/v1alpha1/namespaces/"+ns+"/rootshards/data/rotation", "-f",
			writeManifest(t, `{"apiVersion":"operator.kcp.io/v1alpha1","kind":"CARotation","spec":{"phase":"Start","authorities":["client"]}}`))
		rotations := func() string {
			return kubectl(t, "get", "rootshard/data", "-n", ns, "-o", "jsonpath={.status.rotations}")
		}
		require.Contains(t, rotations(), `"phase":"Preparing"`)
		started := rotations()
		for _, tc := range []struct {
			name, status, patch, says string
		}{
			{"the controllers' step to Prepared", "Error from server (Forbidden)",
				`[{"op":"replace","path":"/status/rotations/0/phase","value":"Prepared"},{"op":"add","path":"/status/rotations/0/lastPreparedTime","value":"2026-01-01T00:00:00Z"}]`,
				`status.rotations[0].phase: user "sam" may not move the rotation of the client CA from Preparing in slot 1 to Prepared in slot 1: only the server's controllers take that step`},
			{"a member excluded from the wait", "Error from server (Forbidden)",
				`[{"op":"add","path":"/status/rotations/0/excludedMembers","value":[{"kind":"FrontProxy","name":"stuck"}]}]`,
				`status.rotations[0].phase: user "sam" may not move the rotation of the client CA from Preparing in slot 1 to Preparing in slot 1, 1 member excluded through the status: ask the rotation subresource (create on rootshards/rotation)`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				out, err := as(sam, "patch", "rootshard/data", "--subresource=status", "--type=json", "-p", tc.patch)
				require.Error(t, err, "refused")
				assert.Contains(t, out, tc.status)
				assert.Contains(t, out, tc.says)
				assert.Equal(t, started, rotations(), "nothing stored")
			})
		}
	})

	t.Run("AnEditorMayNotAskForTheDataToGo", func(t *testing.T) {
		out, err := as(eve, "annotate", "rootshard/data", "operator.kcp.io/delete-etcd-volumes=true")
		require.Error(t, err)
		assert.Contains(t, out, `user "eve" may not set metadata.annotations[operator.kcp.io/delete-etcd-volumes] to true without delete on persistentvolumeclaims in namespace "`+ns+`"`)
		assert.Equal(t, before, stored(), "nothing stored")
		_, err = as(eve, "annotate", "rootshard/data", "example.com/note=mine")
		require.NoError(t, err, "an annotation that asks nothing of the server passes")
	})

	t.Run("TheAdminsDeletionDeletesItsOwnClaimsAlone", func(t *testing.T) {
		ours := []string{"data-data-etcd-1", "data-data-etcd-2"}
		for _, name := range ours {
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				pvc, err := stack.Kube.CoreV1().PersistentVolumeClaims(ns).Get(t.Context(), name, metav1.GetOptions{})
				require.NoError(c, err, "the StatefulSet controller makes the member's claim")
				assert.Equal(c, uid, pvc.Labels["operator.kcp.io/owner-uid"], "the claim carries its owner's UID, from the claim template")
			}, 3*time.Minute, time.Second)
		}
		sts, err := stack.Kube.AppsV1().StatefulSets(ns).Get(t.Context(), "data-etcd", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, "Retain", string(sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted), "the StatefulSet controller deletes no claim")

		kubectl(t, "annotate", "rootshard/data", "-n", ns, "operator.kcp.io/delete-etcd-volumes=true")
		kubectl(t, "delete", "rootshard/data", "-n", ns, "--timeout=3m")
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			for _, name := range ours {
				pvc, err := stack.Kube.CoreV1().PersistentVolumeClaims(ns).Get(t.Context(), name, metav1.GetOptions{})
				assert.True(c, apierrors.IsNotFound(err) || pvc.DeletionTimestamp != nil, "the RootShard's own claim %s goes", name)
			}
		}, 2*time.Minute, time.Second)
		claims, err := stack.Kube.CoreV1().PersistentVolumeClaims(ns).List(t.Context(), metav1.ListOptions{})
		require.NoError(t, err)
		var live []string
		for _, pvc := range claims.Items {
			if pvc.DeletionTimestamp == nil {
				live = append(live, pvc.Name)
			}
		}
		slices.Sort(live)
		assert.Equal(t, []string{leftover.Name, lookalike.Name}, live, "another owner's claim of its names, and one with its labels, stay")
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			events := kubectl(t, "get", "events", "-n", ns, "--field-selector=reason=EtcdVolumesKept", "-o", "json")
			var list corev1.EventList
			require.NoError(c, json.Unmarshal([]byte(events), &list))
			require.NotEmpty(c, list.Items, "the deletion says which claims it kept")
			assert.Contains(c, list.Items[0].Message, "data-data-etcd-0")
			assert.NotContains(c, list.Items[0].Message, "scratch", "a claim it was not asked about is none of its business")
		}, time.Minute, time.Second)
	})
}

// etcdClaim is a claim with the labels of the managed etcd of the RootShard data, and labels.
func etcdClaim(name string, labels map[string]string) *corev1.PersistentVolumeClaim {
	l := map[string]string{
		"app.kubernetes.io/managed-by": "kcp-setups", "app.kubernetes.io/instance": "data",
		"app.kubernetes.io/component": "etcd", "operator.kcp.io/rootshard": "data",
	}
	for k, v := range labels {
		l[k] = v
	}
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
}
