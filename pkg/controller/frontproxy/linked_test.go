package frontproxy

import (
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/link/linktest"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/reference/referencetest"
)

// TestLinkedFrontProxyIsRealizedOverItsLink: a FrontProxy joined over a link waits for the
// link's bundles, then is realized with no CA Secret and no Issuer, every certificate issued
// by the LinkIssuer; the bundles going away removes nothing.
func TestLinkedFrontProxyIsRealizedOverItsLink(t *testing.T) {
	const bootstrapName = "eu-1-link-bootstrap"
	fp := &operatorv1alpha1.FrontProxy{
		ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "team-a", Generation: 1, Finalizers: []string{kinds.FrontProxy.Finalizer()}},
		Spec: operatorv1alpha1.FrontProxySpec{
			RootShard: operatorv1alpha1.RootShardConfig{Link: &operatorv1alpha1.RootShardLink{SecretRef: corev1.LocalObjectReference{Name: bootstrapName}}},
			External:  &operatorv1alpha1.FrontProxyExternalConfig{Hostname: "edge.team-a.example.com"},
		},
	}
	j := &joinedFixture{Fixture: controllertest.NewFixture(t, kinds.FrontProxy, fp)}
	j.c = controllertest.ControllerOf[Controller](j.Fixture)
	reason := func(fp *operatorv1alpha1.FrontProxy) string {
		c := meta.FindStatusCondition(fp.Status.Conditions, operatorv1alpha1.ConditionReferenceValid)
		require.NotNil(t, c)
		return c.Reason
	}

	bootstrap := linktest.Bootstrap(t, "team-a", bootstrapName, "bootstrap-uid")
	j.Host.PutReference(t, bootstrap)
	assert.Equal(t, operatorv1alpha1.ReasonLinkBundlesNotReceived, reason(j.sync(t)))
	assert.Empty(t, j.Host.Caches["certificates"].List(), "nothing is realized without the bundles")

	bundles := linktest.Bundles(t, bootstrap, referencetest.CAs(t), reference.FrontProxyJoin)
	j.Host.PutSecret(t, bundles)
	require.NoError(t, j.Host.Caches["secrets"].Add(bundles))
	for range 4 {
		j.sync(t)
		j.Host.CatchUp(t)
	}
	got := j.sync(t)
	assert.Equal(t, operatorv1alpha1.ReasonReferencesFound, reason(got), "conditions: %+v", got.Status.Conditions)
	assert.Empty(t, j.Host.Caches["issuers"].List(), "no CA Issuer")
	certs := j.Host.Caches["certificates"].List()
	require.NotEmpty(t, certs)
	for _, obj := range certs {
		c := obj.(*cmv1.Certificate)
		assert.Equal(t, link.IssuerKind, c.Spec.IssuerRef.Kind, c.Name)
	}
	for _, name := range controllertest.LocalCAs(frontproxy.Kind, "edge", reference.FrontProxyJoin) {
		_, exists, err := j.Host.Caches["secrets"].GetByKey("team-a/" + name)
		require.NoError(t, err)
		assert.False(t, exists, "no local CA Secret %s", name)
	}

	secrets := len(j.Host.Caches["secrets"].List())
	require.NoError(t, j.Host.Caches["secrets"].Delete(bundles))
	j.Host.Reset()
	j.Ours.ClearActions()
	got = j.sync(t)
	assert.Equal(t, operatorv1alpha1.ReasonLinkBundlesNotReceived, reason(got))
	assert.Equal(t, []string{"update frontproxies/status"}, j.Host.Writes(j.Ours.Actions()), "nothing is removed while the bundles are missing")
	assert.Len(t, j.Host.Caches["secrets"].List(), secrets-1)
}
