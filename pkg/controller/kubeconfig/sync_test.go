package kubeconfig

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
)

// converged is a fixture whose Kubeconfig ci toward the FrontProxy edge is realized, with a
// certificate that expires at notAfter.
func converged(t *testing.T, notAfter time.Time) (*fixture, *operatorv1alpha1.Kubeconfig, []byte) {
	f := newFixture(t, kubeconfigFor("ci", toFrontProxy("edge")), rootShard("root"), frontProxy("edge", "root"), caBundle("root"))

	got := f.sync(t, "ci")
	assert.Equal(t, operatorv1alpha1.KubeconfigPhaseProvisioning, got.Status.Phase)
	available := meta.FindStatusCondition(got.Status.Conditions, operatorv1alpha1.ConditionAvailable)
	require.NotNil(t, available)
	assert.Equal(t, operatorv1alpha1.ReasonCertificatePending, available.Reason)
	_, exists, err := f.Host.Caches["secrets"].GetByKey("team-a/ci-kubeconfig")
	require.NoError(t, err)
	assert.False(t, exists, "no kubeconfig before the certificate is issued")

	certPEM := f.issue(t, "ci", notAfter, "1")
	for range 2 {
		got = f.sync(t, "ci")
	}
	require.Equal(t, operatorv1alpha1.KubeconfigPhaseReady, got.Status.Phase, "conditions: %+v", got.Status.Conditions)
	return f, got, certPEM
}

// written is the kubeconfig file in the Secret ci-kubeconfig.
func written(t *testing.T, f *fixture) []byte {
	o, exists, err := f.Host.Caches["secrets"].GetByKey("team-a/ci-kubeconfig")
	require.NoError(t, err)
	require.True(t, exists, "the kubeconfig Secret is written")
	return o.(*corev1.Secret).Data[kcp.KubeconfigKey]
}

func TestResyncOfARealizedKubeconfigWritesNothing(t *testing.T) {
	f, _, _ := converged(t, time.Now().Add(24*time.Hour))
	f.Host.Reset()
	f.Ours.ClearActions()
	f.sync(t, "ci")
	assert.Empty(t, f.Host.Writes(f.Ours.Actions()), "a resync of an unchanged, realized Kubeconfig must not write")
}

func TestStatusReportsTheTargetAndTheExpiry(t *testing.T) {
	notAfter := time.Now().Add(24 * time.Hour).Truncate(time.Second)
	f, got, certPEM := converged(t, notAfter)

	assert.Equal(t, "FrontProxy/edge", got.Status.TargetName)
	require.NotNil(t, got.Status.ExpirationTimestamp)
	assert.True(t, notAfter.Equal(got.Status.ExpirationTimestamp.Time), "the issued certificate's NotAfter, got %v", got.Status.ExpirationTimestamp)
	assert.EqualValues(t, 1, got.Status.ObservedGeneration)
	for _, c := range []struct{ t, reason string }{
		{operatorv1alpha1.ConditionReferenceValid, operatorv1alpha1.ReasonReferencesFound},
		{operatorv1alpha1.ConditionCertificatesReady, operatorv1alpha1.ReasonCertificatesIssued},
		{operatorv1alpha1.ConditionAvailable, operatorv1alpha1.ReasonKubeconfigWritten},
	} {
		cond := meta.FindStatusCondition(got.Status.Conditions, c.t)
		require.NotNil(t, cond, c.t)
		assert.Equal(t, metav1.ConditionTrue, cond.Status, c.t)
		assert.Equal(t, c.reason, cond.Reason, c.t)
	}
	assert.Contains(t, meta.FindStatusCondition(got.Status.Conditions, operatorv1alpha1.ConditionAvailable).Message, "ci-kubeconfig")

	cfg, err := clientcmd.Load(written(t, f))
	require.NoError(t, err)
	assert.Equal(t, "https://edge.example.com:8443/clusters/root", cfg.Clusters["default"].Server)
	assert.Equal(t, certPEM, cfg.AuthInfos[cfg.Contexts["default"].AuthInfo].ClientCertificateData)
	assert.Equal(t, caBundle("root").Data["tls.crt"], cfg.Clusters["default"].CertificateAuthorityData)
}

func TestRenewalRewritesTheSecret(t *testing.T) {
	f, _, _ := converged(t, time.Now().Add(24*time.Hour))
	f.Host.Reset()

	renewed := time.Now().Add(48 * time.Hour).Truncate(time.Second)
	certPEM := f.issue(t, "ci", renewed, "2")
	got := f.sync(t, "ci")

	assert.Equal(t, []string{"Secret ci-kubeconfig"}, f.Host.Writes(), "only the kubeconfig Secret is written again")
	require.NotNil(t, got.Status.ExpirationTimestamp)
	assert.True(t, renewed.Equal(got.Status.ExpirationTimestamp.Time), "the renewed certificate's NotAfter, got %v", got.Status.ExpirationTimestamp)
	cfg, err := clientcmd.Load(written(t, f))
	require.NoError(t, err)
	assert.Equal(t, certPEM, cfg.AuthInfos[cfg.Contexts["default"].AuthInfo].ClientCertificateData)
}

func TestANewSecretRefReplacesTheFormerSecret(t *testing.T) {
	f, got, _ := converged(t, time.Now().Add(24*time.Hour))
	got = got.DeepCopy()
	got.Spec.SecretRef.Name = "ci-credentials"
	got.Generation = 2
	require.NoError(t, f.Caches.Kubeconfigs.Update(got))
	require.NoError(t, f.Ours.Tracker().Update(operatorv1alpha1.SchemeGroupVersion.WithResource("kubeconfigs"), got, "team-a"))
	f.Host.Reset()

	got = f.sync(t, "ci")
	assert.Equal(t, operatorv1alpha1.KubeconfigPhaseReady, got.Status.Phase)
	assert.Contains(t, f.Host.Writes(), "Secret ci-credentials")
	var deleted []string
	for _, a := range f.Host.Kube.Actions() {
		if d, ok := a.(clienttesting.DeleteAction); ok {
			deleted = append(deleted, d.GetName())
		}
	}
	assert.Equal(t, []string{"ci-kubeconfig"}, deleted, "the former Secret holds a live credential")
}

func TestDeletionRemovesWhatTheKubeconfigOwns(t *testing.T) {
	deleting := kubeconfigFor("ci", toFrontProxy("edge"))
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	deleting.Status.Phase = operatorv1alpha1.KubeconfigPhaseReady

	f := newFixture(t, deleting, rootShard("root"), frontProxy("edge", "root"))
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/ci"))
	var deletes []string
	for _, a := range append(f.Host.Kube.Actions(), f.Host.CM.Actions()...) {
		if dc, ok := a.(clienttesting.DeleteCollectionAction); ok {
			deletes = append(deletes, a.GetResource().Resource+" "+dc.GetListRestrictions().Labels.String())
		}
	}
	owned := "app.kubernetes.io/managed-by=kcp-setups,operator.kcp.io/kubeconfig=ci"
	assert.Contains(t, deletes, "certificates "+owned)
	assert.Contains(t, deletes, "secrets "+owned, "cert-manager's Secret and the kubeconfig Secret carry the owner label")

	got, err := f.Ours.OperatorV1alpha1().Kubeconfigs("team-a").Get(t.Context(), "ci", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, got.Finalizers, "the finalizer goes once what the Kubeconfig owns is deleted")
	assert.Equal(t, operatorv1alpha1.KubeconfigPhaseReady, got.Status.Phase, "Deleting is no Kubeconfig phase: the status update would be rejected")
	available := meta.FindStatusCondition(got.Status.Conditions, operatorv1alpha1.ConditionAvailable)
	require.NotNil(t, available)
	assert.Equal(t, operatorv1alpha1.ReasonDeleting, available.Reason)
}
