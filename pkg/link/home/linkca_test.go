package home

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
)

// TestBundlesSayWhichLinkCASigns: the Bundles carry the link CA the Issuer signs from
// (linkCAIssuer) next to the bundle of its live slots, through a rotation: the old CA until
// the leaves switch, the new one from then on, and the revision changes at each step.
func TestBundlesSayWhichLinkCASigns(t *testing.T) {
	f := newFixture(t)
	f.start(nil)
	next := newCA(t, "root-link-ca-next")
	f.putSecret(pki.SlotName(linkpki.CAName(f.rs), 1), "link-ca", "", map[string][]byte{corev1.TLSCertKey: next.pem()})
	now := metav1.Now()
	revisions := map[string]bool{}
	for _, tc := range []struct {
		name           string
		rotation       *operatorv1alpha1.CARotationState
		linkCA, issuer []byte
	}{
		{"no rotation", nil, f.ca.pem(), f.ca.pem()},
		{"started", &operatorv1alpha1.CARotationState{Authority: "link", Slot: 1, Phase: operatorv1alpha1.CARotationPreparing},
			certificates.Bundle(f.ca.pem(), next.pem()), f.ca.pem()},
		{"the leaves switched", &operatorv1alpha1.CARotationState{Authority: "link", Slot: 1, Phase: operatorv1alpha1.CARotationPreparing, LeavesSwitched: true},
			certificates.Bundle(f.ca.pem(), next.pem()), next.pem()},
		{"the old CA dropped", &operatorv1alpha1.CARotationState{Authority: "link", Slot: 1, Phase: operatorv1alpha1.CARotationCompleting,
			LeavesSwitched: true, LastCompletionTime: &now}, next.pem(), next.pem()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := f.rs.DeepCopy()
			rs.Status.Rotations = nil
			if tc.rotation != nil {
				rs.Status.Rotations = []operatorv1alpha1.CARotationState{*tc.rotation}
			}
			require.NoError(t, f.rootShards.Update(rs))
			b, err := f.server.bundlesOf(Declaration(f.link))
			require.NoError(t, err)
			assert.Equal(t, string(tc.linkCA), string(b.LinkCA))
			assert.Equal(t, string(tc.issuer), string(b.LinkCAIssuer))
			assert.False(t, revisions[b.Revision], "a new revision")
			revisions[b.Revision] = true
		})
	}
}
