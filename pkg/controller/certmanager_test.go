package controller

import (
	"context"
	"testing"

	cmfake "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/fake"
	cminformers "github.com/cert-manager/cert-manager/pkg/client/informers/externalversions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
)

func TestSetCertManagerNotInstalled(t *testing.T) {
	for _, tc := range []struct {
		name          string
		conditions    []metav1.Condition
		wantAvailable metav1.Condition
	}{
		{
			name:          "a new object waits",
			wantAvailable: metav1.Condition{Status: metav1.ConditionFalse, Reason: operatorv1alpha1.ReasonCertManagerNotInstalled},
		},
		{
			name: "what runs keeps its Available condition",
			conditions: []metav1.Condition{
				{Type: operatorv1alpha1.ConditionAvailable, Status: metav1.ConditionTrue, Reason: operatorv1alpha1.ReasonReplicasAvailable},
				{Type: operatorv1alpha1.ConditionCertificatesReady, Status: metav1.ConditionTrue, Reason: operatorv1alpha1.ReasonCertificatesIssued},
			},
			wantAvailable: metav1.Condition{Status: metav1.ConditionTrue, Reason: operatorv1alpha1.ReasonReplicasAvailable},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conditions := append([]metav1.Condition{}, tc.conditions...)
			SetCertManagerNotInstalled(&conditions, 3)
			certs := meta.FindStatusCondition(conditions, operatorv1alpha1.ConditionCertificatesReady)
			require.NotNil(t, certs)
			assert.Equal(t, metav1.ConditionFalse, certs.Status)
			assert.Equal(t, operatorv1alpha1.ReasonCertManagerNotInstalled, certs.Reason)
			assert.Equal(t, "cert-manager.io/v1 is not served by the host cluster; install cert-manager", certs.Message)
			assert.Equal(t, int64(3), certs.ObservedGeneration)
			available := meta.FindStatusCondition(conditions, operatorv1alpha1.ConditionAvailable)
			require.NotNil(t, available)
			assert.Equal(t, tc.wantAvailable.Status, available.Status)
			assert.Equal(t, tc.wantAvailable.Reason, available.Reason)
			assert.Equal(t, operatorv1alpha1.PhaseProvisioning, Phase(conditions))
		})
	}
}

func TestSetCertificatesReadyCountsAndNamesThePending(t *testing.T) {
	var conditions []metav1.Condition
	SetCertificatesReady(&conditions, 1, 12, []string{"g", "b", "a", "f", "c", "e", "d"})
	c := meta.FindStatusCondition(conditions, operatorv1alpha1.ConditionCertificatesReady)
	require.NotNil(t, c)
	assert.Equal(t, operatorv1alpha1.ReasonCertificatesPending, c.Reason)
	assert.Equal(t, "7 of 12 certificates are not Ready, waiting for cert-manager to issue them: a, b, c, d, e and 2 more", c.Message)
}

// TestRequiringCertManager: while cert-manager is missing, reconcile does not run, the
// status says why, and an Event says it once.
func TestRequiringCertManager(t *testing.T) {
	recorder := record.NewFakeRecorder(10)
	discovery := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	missing := hostcluster.NewCertManagerAPI(discovery, cminformers.NewSharedInformerFactory(cmfake.NewSimpleClientset(), 0))
	l := Lifecycle[*operatorv1alpha1.RootShard, operatorv1alpha1.RootShardStatus]{
		Kind: rootShards(""),
		Host: &hostcluster.Host{CertManagerAPI: missing}, Recorder: recorder,
	}
	reconciled := 0
	reconcile := l.RequiringCertManager(func(context.Context, *operatorv1alpha1.RootShard, *operatorv1alpha1.RootShardStatus) error {
		reconciled++
		return nil
	})
	rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "root", Generation: 1}}

	for i := range 2 {
		status := rs.Status.DeepCopy()
		require.NoError(t, reconcile(context.Background(), rs, status))
		l.markSynced(rs, status)
		assert.Equal(t, 0, reconciled)
		assert.Equal(t, operatorv1alpha1.PhaseProvisioning, status.Phase)
		assert.True(t, meta.IsStatusConditionPresentAndEqual(status.Conditions, operatorv1alpha1.ConditionCertificatesReady, metav1.ConditionFalse))
		synced := meta.FindStatusCondition(status.Conditions, operatorv1alpha1.ConditionSynced)
		require.NotNil(t, synced, "nothing was written to the host: Synced must say so")
		assert.Equal(t, metav1.ConditionFalse, synced.Status)
		assert.Equal(t, operatorv1alpha1.ReasonCertManagerNotInstalled, synced.Reason)
		if i == 0 {
			require.Len(t, recorder.Events, 1)
			assert.Equal(t, "Warning CertManagerNotInstalled cert-manager.io/v1 is not served by the host cluster; install cert-manager", <-recorder.Events)
		} else {
			assert.Empty(t, recorder.Events, "no Event while the status says it already")
		}
		rs.Status = *status
	}

	// Installed: reconcile runs.
	discovery.Resources = []*metav1.APIResourceList{{GroupVersion: hostcluster.CertManagerGroupVersion,
		APIResources: []metav1.APIResource{{Name: "certificates"}, {Name: "issuers"}}}}
	missing.Check(t.Context())
	require.True(t, missing.Ready())
	status := rs.Status.DeepCopy()
	require.NoError(t, reconcile(context.Background(), rs, status))
	l.markSynced(rs, status)
	assert.Equal(t, 1, reconciled)
	assert.True(t, meta.IsStatusConditionPresentAndEqual(status.Conditions, operatorv1alpha1.ConditionSynced, metav1.ConditionTrue))
}
