package controller_test

import (
	"errors"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmlisters "github.com/cert-manager/cert-manager/pkg/client/listers/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/rotation"
)

// brokenCertificates is a Certificate cache whose reads fail.
type brokenCertificates struct{ cmlisters.CertificateLister }

func (brokenCertificates) Certificates(string) cmlisters.CertificateNamespaceLister {
	return brokenCertificatesOf{}
}

type brokenCertificatesOf struct {
	cmlisters.CertificateNamespaceLister
}

func (brokenCertificatesOf) Get(string) (*cmv1.Certificate, error) {
	return nil, errors.New("the cache is broken")
}

// TestARotationsFailedReadIsTheReconcilesError: a read of the host that fails is the
// reconcile's error, and the rotations and their condition stay as they were; a read that
// finds nothing is a wait.
func TestARotationsFailedReadIsTheReconcilesError(t *testing.T) {
	available := []metav1.Condition{{Type: operatorv1alpha1.ConditionAvailable, Status: metav1.ConditionTrue, Reason: "Available"}}
	for _, tc := range []struct {
		name   string
		broken bool
	}{{name: "a read that fails", broken: true}, {name: "a read that finds nothing"}} {
		t.Run(tc.name, func(t *testing.T) {
			h := controllertest.NewHost(t)
			if tc.broken {
				h.Host.Certificates = brokenCertificates{}
			}
			rotations := []operatorv1alpha1.CARotationState{{Authority: "client", Phase: operatorv1alpha1.CARotationPreparing, Slot: 1}}
			conditions := []metav1.Condition{}
			err := controller.AdvanceRotations(t.Context(), h.Host, rotation.Input{
				Rotations: rotations,
				Issuer:    func(a pki.Authority) string { return pki.RootShardIssuer("root", a) },
				Object:    rotation.Member{Kind: "RootShard", Namespace: "team-a", Name: "root", Conditions: available},
			}, &rotations, &conditions)
			if tc.broken {
				require.ErrorContains(t, err, "the cache is broken")
				assert.Empty(t, conditions, "no condition from a failed read")
				return
			}
			require.NoError(t, err)
			require.Len(t, conditions, 1)
			assert.Equal(t, "rotating the CAs client (Preparing, waiting for the new CA root-client-ca-next to be issued)", conditions[0].Message)
		})
	}
}
