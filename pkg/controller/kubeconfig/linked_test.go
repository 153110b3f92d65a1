package kubeconfig

import (
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/link/linktest"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/reference/referencetest"
)

// TestALinkedKubeconfigIsSignedOverItsLink: a Kubeconfig whose target is a link waits for the
// link's bundles, then has its Certificate issued by the LinkIssuer of its local
// front-proxy-client CA's name, writes no CA Secret and no Issuer, and once issued writes its
// kubeconfig toward the RootShard the bundles describe.
func TestALinkedKubeconfigIsSignedOverItsLink(t *testing.T) {
	const bootstrapName = "eu-1-link-bootstrap"
	f := newFixture(t, kubeconfigFor("ci", operatorv1alpha1.KubeconfigTarget{RootShardLink: &operatorv1alpha1.RootShardLink{
		SecretRef: corev1.LocalObjectReference{Name: bootstrapName}}}))
	bootstrap := linktest.Bootstrap(t, "team-a", bootstrapName, "bootstrap-uid")
	f.Host.PutReference(t, bootstrap)
	got := f.sync(t, "ci")
	ref := condition(t, got, operatorv1alpha1.ConditionReferenceValid)
	assert.Equal(t, metav1.ConditionFalse, ref.Status)
	assert.Equal(t, operatorv1alpha1.ReasonLinkBundlesNotReceived, ref.Reason)
	assert.Equal(t, metav1.ConditionUnknown, condition(t, got, operatorv1alpha1.ConditionConsumerLinkReady).Status)
	assert.Equal(t, "Link/"+bootstrapName, got.Status.TargetName)
	assert.Empty(t, f.Host.Caches["certificates"].List(), "nothing is realized without the bundles")

	bundles := linktest.Bundles(t, bootstrap, referencetest.CAs(t), reference.KubeconfigIssuer)
	f.Host.PutSecret(t, bundles)
	require.NoError(t, f.Host.Caches["secrets"].Add(bundles))
	got = f.sync(t, "ci")
	assert.Equal(t, metav1.ConditionTrue, condition(t, got, operatorv1alpha1.ConditionReferenceValid).Status, "conditions: %+v", got.Status.Conditions)
	certs := f.Host.Caches["certificates"].List()
	require.Len(t, certs, 1)
	issuer := certs[0].(*cmv1.Certificate).Spec.IssuerRef
	assert.Equal(t, link.IssuerKind, issuer.Kind)
	assert.Equal(t, link.IssuerGroup, issuer.Group)
	assert.Equal(t, localSigner, issuer.Name)
	assert.Empty(t, f.Host.Caches["issuers"].List(), "no CA Issuer")
	_, exists, err := f.Host.Caches["secrets"].GetByKey("team-a/" + localSigner)
	require.NoError(t, err)
	assert.False(t, exists, "no local CA Secret")

	f.issue(t, "ci", time.Now().Add(24*time.Hour), "1")
	got = f.sync(t, "ci")
	assert.Equal(t, operatorv1alpha1.KubeconfigPhaseReady, got.Status.Phase, "conditions: %+v", got.Status.Conditions)
	assert.NotEmpty(t, f.Host.Secret(t, "team-a", "ci-kubeconfig").Data["kubeconfig"])
}
