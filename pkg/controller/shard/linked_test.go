package shard

import (
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/link/linktest"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/reference/referencetest"
)

const linkBootstrap = "eu-1-link-bootstrap"

// newLinkedFixture is shard-1 joined over the link of the bootstrap Secret
// eu-1-link-bootstrap of team-a; no RootShard exists in team-a, nor, yet, the bootstrap.
func newLinkedFixture(t *testing.T) *fixture {
	f := newFixture(t)
	s, err := kinds.Shard.Lister(f.c.Indexes, "team-a").Get("shard-1")
	require.NoError(t, err)
	s = s.DeepCopy()
	s.Spec.RootShard = operatorv1alpha1.RootShardConfig{Link: &operatorv1alpha1.RootShardLink{SecretRef: corev1.LocalObjectReference{Name: linkBootstrap}}}
	require.NoError(t, f.Caches.Shards.Update(s))
	_, err = f.Ours.OperatorV1alpha1().Shards("team-a").Update(t.Context(), s, metav1.UpdateOptions{})
	require.NoError(t, err)
	f.Ours.ClearActions()
	return f
}

// putLinked writes the bootstrap Secret as the user carried it, and, with bundles, the
// bundles Secret as the remote's link client writes it: into the host and the caches.
func putLinked(t *testing.T, f *fixture, bundles bool) *corev1.Secret {
	bootstrap := linktest.Bootstrap(t, "team-a", linkBootstrap, "bootstrap-uid")
	f.Host.PutReference(t, bootstrap)
	if bundles {
		b := linktest.Bundles(t, bootstrap, referencetest.CAs(t), reference.ShardJoin)
		f.Host.PutSecret(t, b)
		require.NoError(t, f.Host.Caches["secrets"].Add(b))
	}
	return bootstrap
}

// TestLinkedShardWaitsForItsLinkAndKeepsWhatItRealized: without the bootstrap Secret, then
// without the bundles, the Shard says which it waits for and writes nothing; with both it is
// realized as a joined Shard with no CA Secret and no Issuer, every certificate issued by the
// LinkIssuer; the bundles going away (the listener down and the Secret lost) removes nothing.
func TestLinkedShardWaitsForItsLinkAndKeepsWhatItRealized(t *testing.T) {
	f := newLinkedFixture(t)
	s := f.sync(t)
	ref := condition(s, operatorv1alpha1.ConditionReferenceValid)
	assert.Equal(t, metav1.ConditionFalse, ref.Status)
	assert.Equal(t, operatorv1alpha1.ReasonReferenceSecretNotFound, ref.Reason)
	assert.Contains(t, ref.Message, linkBootstrap)
	linkReady := condition(s, operatorv1alpha1.ConditionConsumerLinkReady)
	assert.Equal(t, metav1.ConditionUnknown, linkReady.Status)
	assert.Equal(t, operatorv1alpha1.ReasonLinkStateUnknown, linkReady.Reason)
	assert.Equal(t, []string{"update shards/status"}, f.Host.Writes(f.Ours.Actions()), "nothing is realized without the bootstrap")
	f.Ours.ClearActions()

	bootstrap := putLinked(t, f, false)
	f.Host.Reset()
	s = f.sync(t)
	ref = condition(s, operatorv1alpha1.ConditionReferenceValid)
	assert.Equal(t, metav1.ConditionFalse, ref.Status)
	assert.Equal(t, operatorv1alpha1.ReasonLinkBundlesNotReceived, ref.Reason)
	assert.Contains(t, ref.Message, link.BundlesName(linkBootstrap))
	assert.Equal(t, "InvalidReference", condition(s, operatorv1alpha1.ConditionRootShard).Reason)
	assert.Equal(t, []string{"update shards/status"}, f.Host.Writes(f.Ours.Actions()), "nothing is realized without the bundles")
	f.Ours.ClearActions()

	// A bundles Secret that is not the bootstrap's (another owner UID) is not read.
	stale := linktest.Bundles(t, bootstrap, referencetest.CAs(t), reference.ShardJoin)
	stale.OwnerReferences[0].UID = "another-bootstrap"
	require.NoError(t, f.Host.Caches["secrets"].Add(stale))
	s = f.sync(t)
	assert.Equal(t, operatorv1alpha1.ReasonLinkBundlesNotReceived, condition(s, operatorv1alpha1.ConditionReferenceValid).Reason)
	require.NoError(t, f.Host.Caches["secrets"].Delete(stale))

	putLinked(t, f, true)
	for range 4 {
		f.sync(t)
		f.Host.CatchUp(t)
	}
	s = f.sync(t)
	assert.Equal(t, metav1.ConditionTrue, condition(s, operatorv1alpha1.ConditionReferenceValid).Status, "conditions: %+v", s.Status.Conditions)
	assert.Equal(t, "Valid", condition(s, operatorv1alpha1.ConditionRootShard).Reason)
	assert.Empty(t, f.Host.Caches["issuers"].List(), "no CA Issuer in the remote cluster")
	certs := f.Host.Caches["certificates"].List()
	require.NotEmpty(t, certs)
	for _, obj := range certs {
		c := obj.(*cmv1.Certificate)
		assert.Equal(t, link.IssuerKind, c.Spec.IssuerRef.Kind, c.Name)
		assert.Equal(t, link.IssuerGroup, c.Spec.IssuerRef.Group, c.Name)
	}
	trusts := 0
	for _, obj := range f.Host.Caches["secrets"].List() {
		sec := obj.(*corev1.Secret)
		assert.False(t, isCASecret(sec.Name), "%s: no local CA Secret", sec.Name)
		if isCASecret(sec.Name[:max(0, len(sec.Name)-len("-trust"))]) {
			trusts++
		}
	}
	assert.Equal(t, 2, trusts, "the pods' trust bundles of the server and request-header CAs are written")
	realized := len(f.Host.Caches["secrets"].List())

	// The bundles gone: ReferenceValid says so, nothing is deleted.
	require.NoError(t, f.Host.Caches["secrets"].Delete(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: link.BundlesName(linkBootstrap)}}))
	f.Host.Reset()
	f.Ours.ClearActions()
	s = f.sync(t)
	assert.Equal(t, operatorv1alpha1.ReasonLinkBundlesNotReceived, condition(s, operatorv1alpha1.ConditionReferenceValid).Reason)
	assert.Equal(t, []string{"update shards/status"}, f.Host.Writes(f.Ours.Actions()), "nothing is removed while the bundles are missing")
	assert.Len(t, f.Host.Caches["secrets"].List(), realized-1, "what was realized stays")
	assert.Len(t, f.Host.Caches["certificates"].List(), len(certs))
}

// isCASecret reports whether name is a local CA Secret of shard-1's joined RootShard.
func isCASecret(name string) bool {
	for _, n := range []string{"server-ca", "client-ca", "front-proxy-client-ca", "requestheader-client-ca", "service-account-ca", "etcd-client-ca", "etcd-peer-ca"} {
		if name == reference.JoinedName("shard", "shard-1")+"-"+n {
			return true
		}
	}
	return false
}

// TestLinkedShardReportsItsLink: LinkReady follows the state of the link the server holds.
func TestLinkedShardReportsItsLink(t *testing.T) {
	f := newLinkedFixture(t)
	putLinked(t, f, true)
	var asked []string
	connected := false
	f.c.LinkState = func(namespace, bootstrap string) (bool, string, string) {
		asked = append(asked, namespace+"/"+bootstrap)
		if connected {
			return true, "Connected", "the stream is up"
		}
		return false, "ListenerUnreachable", "dial tcp: connection refused"
	}
	s := f.sync(t)
	c := condition(s, operatorv1alpha1.ConditionConsumerLinkReady)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, "ListenerUnreachable", c.Reason)
	assert.Equal(t, metav1.ConditionTrue, condition(s, operatorv1alpha1.ConditionReferenceValid).Status, "a link down keeps the Shard realized from what it received")
	assert.Contains(t, asked, "team-a/"+linkBootstrap)

	connected = true
	s = f.sync(t)
	c = condition(s, operatorv1alpha1.ConditionConsumerLinkReady)
	assert.Equal(t, metav1.ConditionTrue, c.Status)
	assert.Equal(t, "Connected", c.Reason)
}
