package cacheserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/golden"
)

// TestRotationPhases shows the cache server's CA in each phase of a rotation from slot 0 to
// slot 1 (docs/rotation.md): its Certificates, and the Secret its Issuer signs from.
func TestRotationPhases(t *testing.T) {
	type view struct {
		Phase        string   `json:"phase"`
		Certificates []string `json:"certificates"`
		IssuerSecret string   `json:"issuerSecret"`
	}
	var views []any
	for _, st := range []*operatorv1alpha1.CARotationState{nil,
		{Authority: "ca", Phase: operatorv1alpha1.CARotationPreparing, Slot: 1},
		{Authority: "ca", Phase: operatorv1alpha1.CARotationPrepared, Slot: 1},
		{Authority: "ca", Phase: operatorv1alpha1.CARotationCompleting, Slot: 1},
		{Authority: "ca", Phase: operatorv1alpha1.CARotationCompleting, Slot: 1, LeavesSwitched: true},
		{Authority: "ca", Phase: operatorv1alpha1.CARotationCompleted, Slot: 1, LeavesSwitched: true},
	} {
		c := minimal()
		v := view{}
		if st != nil {
			c.Status.Rotations = []operatorv1alpha1.CARotationState{*st}
			v.Phase = string(st.Phase)
			if st.LeavesSwitched {
				v.Phase += ", leaves switched"
			}
		}
		objs := c.PKI()
		for _, cert := range objs.Certificates {
			if cert.Spec.IsCA != nil && *cert.Spec.IsCA {
				v.Certificates = append(v.Certificates, *cert.Name)
			}
		}
		for _, i := range objs.Issuers {
			if *i.Name == c.CAName() {
				v.IssuerSecret = *i.Spec.CA.SecretName
			}
		}
		views = append(views, v)
	}
	golden.Assert(t, "rotation", views...)
}

// TestRotationOfTheUsersCA: a CA the user brings (caSecretRef) stays as it is; the
// subresource refuses to rotate it.
func TestRotationOfTheUsersCA(t *testing.T) {
	c := minimal()
	c.Spec.Certificates = &operatorv1alpha1.Certificates{CASecretRef: &corev1.LocalObjectReference{Name: "my-ca"}}
	before := c.PKI()
	c.Status.Rotations = []operatorv1alpha1.CARotationState{{Authority: "ca", Phase: operatorv1alpha1.CARotationPreparing, Slot: 1}}
	after := c.PKI()
	assert.Equal(t, before, after)
	assert.Equal(t, "my-ca", *after.Issuers[0].Spec.CA.SecretName)
}
