package hostcluster

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// TestDeleteEtcdClaims: an owner's deletion deletes the claims of its etcd's names that carry
// its UID, each with its own UID as a precondition, and keeps a claim of one of those names
// that is another owner's, or unmarked, and whatever claim it was not asked about, however
// labelled.
func TestDeleteEtcdClaims(t *testing.T) {
	claim := func(name, uid string, labels map[string]string) runtime.Object {
		l := map[string]string{pki.OwnerLabel("rootshard"): "data"}
		if uid != "" {
			l[pki.LabelOwnerUID] = uid
		}
		for k, v := range labels {
			l[k] = v
		}
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", UID: types.UID("pvc-" + name), Labels: l}}
	}
	kube := kubefake.NewSimpleClientset(
		claim("data-data-etcd-0", "owner", nil),
		claim("data-data-etcd-1", "another-owner", nil),
		claim("data-data-etcd-2", "", nil),
		// Not one of the names asked about, with the owner's labels and UID.
		claim("data-data-etcd-9", "owner", nil),
	)
	h := &Host{Kube: kube}
	names := []string{"data-data-etcd-0", "data-data-etcd-1", "data-data-etcd-2", "data-data-etcd-3"}
	kept, err := h.DeleteEtcdClaims(t.Context(), "team-a", names, "owner")
	require.NoError(t, err)
	assert.Equal(t, []string{"data-data-etcd-1", "data-data-etcd-2"}, kept)

	var deleted []string
	for _, a := range kube.Actions() {
		if d, ok := a.(clienttesting.DeleteActionImpl); ok {
			deleted = append(deleted, d.Name)
			require.NotNil(t, d.DeleteOptions.Preconditions, "deleted with a precondition")
			assert.Equal(t, types.UID("pvc-"+d.Name), *d.DeleteOptions.Preconditions.UID, "the UID of the claim read")
		}
		assert.NotEqual(t, "list", a.GetVerb(), "claims are found by name, not by a selector")
	}
	assert.Equal(t, []string{"data-data-etcd-0"}, deleted)

	left, err := kube.CoreV1().PersistentVolumeClaims("team-a").List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	var names2 []string
	for _, c := range left.Items {
		names2 = append(names2, c.Name)
	}
	assert.ElementsMatch(t, []string{"data-data-etcd-1", "data-data-etcd-2", "data-data-etcd-9"}, names2)

	kept, err = h.DeleteEtcdClaims(t.Context(), "team-a", []string{"data-data-etcd-9"}, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"data-data-etcd-9"}, kept, "an owner without a UID deletes nothing")
}
