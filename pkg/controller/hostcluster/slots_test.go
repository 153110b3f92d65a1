package hostcluster_test

import (
	"strings"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// TestTheOldSlotIsDeletedOnlyAsTheOwners: once a rotation dropped its old CA, the old slot
// (root-client-ca, slot 0, after a rotation into slot 1; rotation.Decide names it) is deleted
// only when it carries the owner's labels and UID, each delete held to the UID read;
// another's stays, a NameConflict.
func TestTheOldSlotIsDeletedOnlyAsTheOwners(t *testing.T) {
	const ns = "team-a"
	owner := hostcluster.Owner{Kind: "rootshard", Name: "root", UID: "uid-root"}
	ours := pki.Labels("rootshard", "root", "client-ca")
	ours[pki.LabelOwnerUID] = "uid-root"
	for _, tc := range []struct {
		name    string
		labels  map[string]string
		deleted bool
	}{
		{name: "the owner's", labels: ours, deleted: true},
		{name: "of another owner of the name", labels: func() map[string]string {
			l := pki.Labels("rootshard", "root", "client-ca")
			l[pki.LabelOwnerUID] = "uid-other"
			return l
		}()},
		{name: "our labels without the owner's UID", labels: pki.Labels("rootshard", "root", "client-ca")},
		{name: "another RootShard's", labels: func() map[string]string {
			l := pki.Labels("rootshard", "root2", "client-ca")
			l[pki.LabelOwnerUID] = "uid-root"
			return l
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := controllertest.NewHost(t)
			meta := metav1.ObjectMeta{Name: "root-client-ca", Namespace: ns, Labels: tc.labels, UID: types.UID("uid-slot")}
			cert := &cmv1.Certificate{ObjectMeta: meta}
			secret := &corev1.Secret{ObjectMeta: meta}
			require.NoError(t, h.Caches["certificates"].Add(cert))
			require.NoError(t, h.Caches["secrets"].Add(secret))
			_, err := h.CM.CertmanagerV1().Certificates(ns).Create(t.Context(), cert, metav1.CreateOptions{})
			require.NoError(t, err)
			_, err = h.Kube.CoreV1().Secrets(ns).Create(t.Context(), secret, metav1.CreateOptions{})
			require.NoError(t, err)
			h.Reset()
			err = h.DeleteSlot(t.Context(), ns, "root-client-ca", owner)
			var deletes []clienttesting.DeleteActionImpl
			for _, a := range append(h.Kube.Actions(), h.CM.Actions()...) {
				if d, ok := a.(clienttesting.DeleteActionImpl); ok {
					deletes = append(deletes, d)
				}
			}
			if !tc.deleted {
				var conflict *hostcluster.NameConflictError
				require.ErrorAs(t, err, &conflict)
				assert.Empty(t, deletes, "nothing of another's is deleted")
				return
			}
			require.NoError(t, err)
			require.Len(t, deletes, 2, "the Certificate, then the Secret")
			for _, d := range deletes {
				assert.Equal(t, "root-client-ca", d.Name)
				require.NotNil(t, d.DeleteOptions.Preconditions)
				assert.Equal(t, types.UID("uid-slot"), *d.DeleteOptions.Preconditions.UID, "held to the UID read")
			}
		})
	}
}

// TestAPlantedSlotIsNeverTrusted: during a rotation, the other slot's Secret is in the CA's
// bundle only when it is what cert-manager issued for the slot's Certificate (the cache holds
// the Certificate, both with one owner's UID); a Secret merely labelled as ours is left out.
func TestAPlantedSlotIsNeverTrusted(t *testing.T) {
	const ns = "team-a"
	oldPEM, _, _ := testCA(t, "root-client-ca")
	newPEM, _, _ := testCA(t, "root-client-ca")
	ours := pki.Labels("rootshard", "root", "client-ca")
	ours[pki.LabelOwnerUID] = "uid-root"
	slots := pki.SlotsOf([]operatorv1alpha1.CARotationState{{Authority: "client", Slot: 1, Phase: operatorv1alpha1.CARotationPreparing}}, "client")
	for _, tc := range []struct {
		name        string
		certificate map[string]string // the labels of the -next Certificate in the cache, nil for none
		secret      map[string]string // the -next Secret's
		trusted     bool
	}{
		{name: "issued for the slot's Certificate", certificate: ours, secret: ours, trusted: true},
		{name: "planted, no Certificate of the slot", secret: ours},
		{name: "planted with our labels, without the UID", certificate: ours, secret: pki.Labels("rootshard", "root", "client-ca")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := controllertest.NewHost(t)
			require.NoError(t, h.Caches["certificates"].Add(&cmv1.Certificate{ObjectMeta: metav1.ObjectMeta{Name: "root-client-ca", Namespace: ns, Labels: ours}}))
			require.NoError(t, h.Caches["secrets"].Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "root-client-ca", Namespace: ns, Labels: ours},
				Data: map[string][]byte{"tls.crt": oldPEM}}))
			if tc.certificate != nil {
				require.NoError(t, h.Caches["certificates"].Add(&cmv1.Certificate{ObjectMeta: metav1.ObjectMeta{Name: "root-client-ca-next", Namespace: ns, Labels: tc.certificate}}))
			}
			require.NoError(t, h.Caches["secrets"].Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "root-client-ca-next", Namespace: ns, Labels: tc.secret},
				Data: map[string][]byte{"tls.crt": newPEM}}))
			bundle, issued, err := h.LiveCAs(ns, "root-client-ca", slots)
			require.NoError(t, err)
			require.True(t, issued)
			assert.Contains(t, string(bundle), string(oldPEM))
			assert.Equal(t, tc.trusted, strings.Contains(string(bundle), string(newPEM)), "the -next slot in the bundle")
		})
	}
}
