package frontproxy

import (
	"slices"
	"strings"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// joinedFixture is the FrontProxy edge, with its own external hostname, joined by
// spec.rootShard.secretRef to a copy of kcp-system/root's front-proxy-join Secret named
// root-front-proxy-join in team-a; no RootShard exists in team-a.
type joinedFixture struct {
	*controllertest.Fixture[*operatorv1alpha1.FrontProxy, operatorv1alpha1.FrontProxyStatus]
	c  *Controller
	in *controllertest.Installation
}

func newJoinedFixture(t *testing.T) *joinedFixture {
	fp := &operatorv1alpha1.FrontProxy{
		ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "team-a", Generation: 1, Finalizers: []string{kinds.FrontProxy.Finalizer()}},
		Spec: operatorv1alpha1.FrontProxySpec{
			RootShard: operatorv1alpha1.RootShardConfig{SecretRef: &corev1.LocalObjectReference{Name: "root-front-proxy-join"}},
			External:  &operatorv1alpha1.FrontProxyExternalConfig{Hostname: "edge.team-a.example.com"},
		},
	}
	j := &joinedFixture{Fixture: controllertest.NewFixture(t, kinds.FrontProxy, fp), in: controllertest.NewInstallation(t)}
	j.c = controllertest.ControllerOf[Controller](j.Fixture)
	return j
}

// sync syncs edge and lets its cache hold what the controller wrote to it.
func (j *joinedFixture) sync(t *testing.T) *operatorv1alpha1.FrontProxy {
	require.NoError(t, j.c.SyncKey(t.Context(), "team-a/edge"))
	return j.Stored(t, "team-a", "edge")
}

// TestJoinedFrontProxyIsRealizedFromItsCopy: a FrontProxy joined by a copy of
// front-proxy-join writes local copies of the RootShard's CAs behind local Issuers, issues
// its certificates from them (its serving certificate for its own and the installation's
// hostnames), reaches the root shard at the copy's URL, and never mounts a CA key.
func TestJoinedFrontProxyIsRealizedFromItsCopy(t *testing.T) {
	j := newJoinedFixture(t)
	j.Host.PutReference(t, j.in.Copies[reference.FrontProxyJoin])
	var fp *operatorv1alpha1.FrontProxy
	for range 5 {
		fp = j.sync(t)
		j.Host.CatchUp(t)
	}

	assert.Equal(t, operatorv1alpha1.PhaseRunning, fp.Status.Phase, "conditions: %+v", fp.Status.Conditions)
	ref := meta.FindStatusCondition(fp.Status.Conditions, operatorv1alpha1.ConditionReferenceValid)
	require.NotNil(t, ref)
	assert.Equal(t, metav1.ConditionTrue, ref.Status)
	assert.Equal(t, operatorv1alpha1.ReasonReferencesFound, ref.Reason)

	j.in.AssertJoined(t, j.Host, frontproxy.Kind, "edge", reference.FrontProxyJoin)
	obj, exists, err := j.Host.Caches["certificates"].GetByKey("team-a/edge-front-proxy-root-edge-server")
	require.NoError(t, err)
	require.True(t, exists, "the serving certificate")
	serving := obj.(*cmv1.Certificate)
	assert.Contains(t, serving.Spec.DNSNames, controllertest.InstallationExternalHost, "the copy's external hostname")
	assert.Contains(t, serving.Spec.DNSNames, "edge.team-a.example.com", "its own")
	assert.Equal(t, "edge-front-proxy-root-server-ca", serving.Spec.IssuerRef.Name)

	f := frontproxy.FrontProxy{FrontProxy: fp, RootShard: reference.JoinedRootShard(frontproxy.Kind, "team-a", "edge")}
	// The root shard at the copy's root-shard-url.
	controllertest.AssertKubeconfigServer(t, j.Host.Secret(t, "team-a", f.DynamicKubeconfigName()), controllertest.InstallationRootShardURL)

	deployments := j.Host.Caches["deployments"].List()
	require.Len(t, deployments, 1)
	controllertest.AssertTrustMounted(t, deployments[0].(*appsv1.Deployment), frontproxy.Kind, "edge", reference.FrontProxyJoin)

	j.Host.Reset()
	j.Ours.ClearActions()
	j.sync(t)
	assert.Empty(t, j.Host.Writes(j.Ours.Actions()), "a resync of an unchanged, realized joined FrontProxy must not write")
}

// TestJoinedFrontProxyWaitsForAUsableCopy: a missing copy, then a copy of another reference
// Secret under the name, are reported (the Secret named, no key material) and realize
// nothing; a good copy heals it.
func TestJoinedFrontProxyWaitsForAUsableCopy(t *testing.T) {
	j := newJoinedFixture(t)
	fp := j.sync(t)
	controllertest.AssertReferenceInvalid(t, fp.Status.Conditions, operatorv1alpha1.ReasonReferenceSecretNotFound, "root-front-proxy-join")
	assert.Equal(t, operatorv1alpha1.PhaseProvisioning, fp.Status.Phase)
	assert.Equal(t, []string{"update frontproxies/status"}, j.Host.Writes(j.Ours.Actions()))

	j.Ours.ClearActions()
	j.Host.PutReference(t, j.in.CopyAs(reference.ShardJoin, "root-front-proxy-join"))
	fp = j.sync(t)
	controllertest.AssertReferenceInvalid(t, fp.Status.Conditions, operatorv1alpha1.ReasonReferenceSecretInvalid, "root-front-proxy-join")
	assert.Equal(t, []string{"update frontproxies/status"}, j.Host.Writes(j.Ours.Actions()), "nothing is realized from a copy that cannot be used")
	events := controllertest.Events(j.Events)
	assert.True(t, slices.ContainsFunc(events, func(e string) bool {
		return strings.HasPrefix(e, "Warning "+operatorv1alpha1.ReasonReferenceSecretInvalid) && strings.Contains(e, "team-a/root-front-proxy-join")
	}), "events: %v", events)
	j.in.AssertNoKeyMaterial(t, fp.Status.Conditions, events)

	j.Host.PutReference(t, j.in.Copies[reference.FrontProxyJoin])
	for range 5 {
		fp = j.sync(t)
		j.Host.CatchUp(t)
	}
	assert.Equal(t, operatorv1alpha1.PhaseRunning, fp.Status.Phase, "conditions: %+v", fp.Status.Conditions)
}

// TestJoinedFrontProxyWithAnUnlabelledCopySaysHowToLabelIt: a copy without the reference
// label is reported as such, not as missing, with the command that labels it as a
// front-proxy-join copy, in an Event too; nothing is realized, and the label added heals it.
func TestJoinedFrontProxyWithAnUnlabelledCopySaysHowToLabelIt(t *testing.T) {
	j := newJoinedFixture(t)
	j.Host.PutReference(t, controllertest.Unlabelled(j.in.Copies[reference.FrontProxyJoin]))
	fp := j.sync(t)
	controllertest.AssertReferenceNotLabelled(t, fp.Status.Conditions, "root-front-proxy-join", reference.FrontProxyJoin)
	assert.Equal(t, operatorv1alpha1.PhaseProvisioning, fp.Status.Phase)
	assert.Equal(t, []string{"update frontproxies/status"}, j.Host.Writes(j.Ours.Actions()))
	events := controllertest.Events(j.Events)
	assert.True(t, slices.ContainsFunc(events, func(e string) bool {
		return strings.HasPrefix(e, "Warning "+operatorv1alpha1.ReasonReferenceSecretNotLabelled) &&
			strings.Contains(e, "kubectl label secret root-front-proxy-join -n team-a operator.kcp.io/reference=front-proxy-join")
	}), "events: %v", events)
	j.in.AssertNoKeyMaterial(t, fp.Status.Conditions, events)

	j.Host.PutReference(t, j.in.Copies[reference.FrontProxyJoin])
	for range 5 {
		fp = j.sync(t)
		j.Host.CatchUp(t)
	}
	assert.Equal(t, operatorv1alpha1.PhaseRunning, fp.Status.Phase, "conditions: %+v", fp.Status.Conditions)
}

// TestJoinedFrontProxyMapsNoPathToAVirtualWorkspace: a FrontProxy joined by a copy routes no
// path to a VirtualWorkspace (its RootShard is not one of its namespace, so no
// VirtualWorkspace here serves it with its PKI): the path is left out and ReferenceValid says
// so, while the rest is realized.
func TestJoinedFrontProxyMapsNoPathToAVirtualWorkspace(t *testing.T) {
	j := newJoinedFixture(t)
	fp := j.Stored(t, "team-a", "edge")
	fp.Spec.AdditionalPathMappings = []operatorv1alpha1.PathMappingEntry{{Path: "/services/access", VirtualWorkspaceRef: &corev1.LocalObjectReference{Name: "access"}}}
	_, err := j.Ours.OperatorV1alpha1().FrontProxies("team-a").Update(t.Context(), fp, metav1.UpdateOptions{})
	require.NoError(t, err)
	j.Stored(t, "team-a", "edge")
	j.Add(t, &operatorv1alpha1.VirtualWorkspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "access"},
		Spec: operatorv1alpha1.VirtualWorkspaceSpec{Target: operatorv1alpha1.VirtualWorkspaceTarget{RootShardRef: &corev1.LocalObjectReference{Name: "root"}}}})
	j.Host.PutReference(t, j.in.Copies[reference.FrontProxyJoin])
	for range 5 {
		fp = j.sync(t)
		j.Host.CatchUp(t)
	}
	ref := meta.FindStatusCondition(fp.Status.Conditions, operatorv1alpha1.ConditionReferenceValid)
	require.NotNil(t, ref)
	assert.Equal(t, metav1.ConditionFalse, ref.Status)
	assert.Equal(t, operatorv1alpha1.ReasonVirtualWorkspaceTargetMismatch, ref.Reason)
	assert.Contains(t, ref.Message, "path /services/access: a FrontProxy of a copied or linked RootShard maps no path to a VirtualWorkspace")
	obj, exists, err := j.Host.Caches["configmaps"].GetByKey("team-a/edge-config")
	require.NoError(t, err)
	require.True(t, exists, "the rest is realized")
	assert.NotContains(t, obj.(*corev1.ConfigMap).Data[frontproxy.MappingKey], "/services/access")
}
