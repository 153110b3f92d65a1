package kubeconfig

import (
	"strings"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/reference/referencetest"
)

// The names the Kubeconfig ci realizes from a copy of a kubeconfig-issuer Secret (the design's
// reference.Join): its local front-proxy-client CA, behind an Issuer of the same name, and
// its server CA bundle.
const (
	issuerCopy    = "root-kubeconfig-issuer"
	localSigner   = "ci-kubeconfig-root-front-proxy-client-ca"
	localCABundle = "ci-kubeconfig-root-merged-ca-bundle"
)

var issuerCopies map[reference.Reference]*corev1.Secret

// copyOf is a well-formed copy, in team-a, of the RootShard kcp/root's reference Secret r
// (built once: the tests change only their own DeepCopy).
func copyOf(t *testing.T, r reference.Reference) *corev1.Secret {
	if issuerCopies == nil {
		issuerCopies = referencetest.Copies(t, referencetest.CAs(t), "team-a")
	}
	return issuerCopies[r].DeepCopy()
}

// setCopy puts s, a copy of a reference Secret, into the cache of reference Secrets.
func (f *fixture) setCopy(t *testing.T, s *corev1.Secret) {
	require.NoError(t, f.Host.Caches[string(controller.ReferenceSecrets)].Update(s))
}

// condition is a condition of got; the test fails when it is not set.
func condition(t *testing.T, got *operatorv1alpha1.Kubeconfig, typ string) *metav1.Condition {
	t.Helper()
	c := meta.FindStatusCondition(got.Status.Conditions, typ)
	require.NotNil(t, c, "no condition %s in %+v", typ, got.Status.Conditions)
	return c
}

// convergedFromCopy is a fixture whose Kubeconfig ci toward the copy of root's
// kubeconfig-issuer Secret is realized and Ready.
func convergedFromCopy(t *testing.T) (*fixture, *operatorv1alpha1.Kubeconfig) {
	f := newFixture(t, kubeconfigFor("ci", toSecret(issuerCopy)), copyOf(t, reference.KubeconfigIssuer))
	f.sync(t, "ci")
	f.issue(t, "ci", time.Now().Add(24*time.Hour), "1")
	got := f.sync(t, "ci")
	require.Equal(t, operatorv1alpha1.KubeconfigPhaseReady, got.Status.Phase, "conditions: %+v", got.Status.Conditions)
	return f, got
}

func TestACopyOfAKubeconfigIssuerSecretIsRealizedAsItsRootShard(t *testing.T) {
	copied := copyOf(t, reference.KubeconfigIssuer)
	f := newFixture(t, kubeconfigFor("ci", toSecret(issuerCopy)), copied)
	got := f.sync(t, "ci")

	// The local CA: the copy's key pair, owned by the Kubeconfig, behind a CA Issuer.
	signer := f.Host.Secret(t, "team-a", localSigner)
	assert.Equal(t, corev1.SecretTypeTLS, signer.Type)
	assert.Equal(t, copied.Data["front-proxy-client-ca.crt"], signer.Data["tls.crt"])
	assert.Equal(t, copied.Data["front-proxy-client-ca.key"], signer.Data["tls.key"])
	assert.Equal(t, "ci", signer.Labels[pki.OwnerLabel("kubeconfig")], "deleted with the Kubeconfig")
	obj, exists, err := f.Host.Caches["issuers"].GetByKey("team-a/" + localSigner)
	require.NoError(t, err)
	require.True(t, exists, "the local CA's Issuer is applied")
	issuer := obj.(*cmv1.Issuer)
	require.NotNil(t, issuer.Spec.CA)
	assert.Equal(t, localSigner, issuer.Spec.CA.SecretName)
	assert.Equal(t, "ci", issuer.Labels[pki.OwnerLabel("kubeconfig")])
	bundle := f.Host.Secret(t, "team-a", localCABundle)
	assert.Equal(t, copied.Data["server-ca-bundle.crt"], bundle.Data["tls.crt"])
	assert.Equal(t, "ci", bundle.Labels[pki.OwnerLabel("kubeconfig")])
	assert.Empty(t, bundle.Data["tls.key"])

	// The certificate is signed by the local CA.
	obj, exists, err = f.Host.Caches["certificates"].GetByKey("team-a/kubeconfig-ci")
	require.NoError(t, err)
	require.True(t, exists)
	assert.Equal(t, localSigner, obj.(*cmv1.Certificate).Spec.IssuerRef.Name)

	assert.Equal(t, "Secret/"+issuerCopy, got.Status.TargetName)
	assert.Equal(t, metav1.ConditionTrue, condition(t, got, operatorv1alpha1.ConditionReferenceValid).Status)
	assert.Equal(t, operatorv1alpha1.ReasonCertificatePending, condition(t, got, operatorv1alpha1.ConditionAvailable).Reason)

	f.issue(t, "ci", time.Now().Add(24*time.Hour), "1")
	got = f.sync(t, "ci")
	require.Equal(t, operatorv1alpha1.KubeconfigPhaseReady, got.Status.Phase, "conditions: %+v", got.Status.Conditions)
	assert.Nil(t, meta.FindStatusCondition(got.Status.Conditions, operatorv1alpha1.ConditionAuthorizationProvisioned))

	// The kubeconfig is toward the root shard URL of the copy, trusting its server CA bundle,
	// with the shard-base context a RootShard's has.
	cfg, err := clientcmd.Load(written(t, f))
	require.NoError(t, err)
	rootShardURL := string(copied.Data["root-shard-url"])
	assert.Equal(t, rootShardURL+"/clusters/root", cfg.Clusters["default"].Server)
	assert.Equal(t, rootShardURL, cfg.Clusters[kcp.ShardBaseContext].Server)
	assert.Equal(t, copied.Data["server-ca-bundle.crt"], cfg.Clusters["default"].CertificateAuthorityData)
}

func TestACopyOfAnotherReferenceOrAMalformedOneIsInvalid(t *testing.T) {
	for _, tc := range []struct {
		name   string
		copy   func(t *testing.T) *corev1.Secret
		wantIn string
	}{
		{
			name: "a shard-join copy under the name",
			copy: func(t *testing.T) *corev1.Secret {
				s := copyOf(t, reference.ShardJoin)
				s.Name = issuerCopy
				return s
			},
			wantIn: `is of type "operator.kcp.io/shard-join", not "operator.kcp.io/kubeconfig-issuer"`,
		},
		{
			name: "the CA's key missing",
			copy: func(t *testing.T) *corev1.Secret {
				s := copyOf(t, reference.KubeconfigIssuer)
				delete(s.Data, "front-proxy-client-ca.key")
				return s
			},
			wantIn: `has no key "front-proxy-client-ca.key"`,
		},
		{
			name: "another CA's key under the CA's",
			copy: func(t *testing.T) *corev1.Secret {
				s := copyOf(t, reference.KubeconfigIssuer)
				s.Data["front-proxy-client-ca.key"] = copyOf(t, reference.ShardJoin).Data["server-ca.key"]
				return s
			},
			wantIn: `"front-proxy-client-ca.key" is not the private key`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			invalid := tc.copy(t)
			f := newFixture(t, kubeconfigFor("ci", toSecret(issuerCopy)), invalid)
			got := f.sync(t, "ci")

			valid := condition(t, got, operatorv1alpha1.ConditionReferenceValid)
			assert.Equal(t, metav1.ConditionFalse, valid.Status)
			assert.Equal(t, operatorv1alpha1.ReasonReferenceSecretInvalid, valid.Reason)
			assert.Contains(t, valid.Message, "Secret team-a/"+issuerCopy+" ")
			assert.Contains(t, valid.Message, tc.wantIn)
			assert.Equal(t, operatorv1alpha1.KubeconfigPhaseProvisioning, got.Status.Phase)
			assert.Empty(t, f.Host.Writes(), "nothing is realized from an invalid copy")
			requireNoKeyMaterial(t, f, got, invalid)
		})
	}
}

// requireNoKeyMaterial fails when a condition or Event quotes the copy's content.
func requireNoKeyMaterial(t *testing.T, f *fixture, got *operatorv1alpha1.Kubeconfig, copied *corev1.Secret) {
	t.Helper()
	var said []string
	for _, c := range got.Status.Conditions {
		said = append(said, c.Message)
	}
	for len(f.Events.Events) > 0 {
		said = append(said, <-f.Events.Events)
	}
	for _, s := range said {
		assert.NotContains(t, s, "BEGIN")
		for k, v := range copied.Data {
			if strings.HasSuffix(k, ".key") || strings.HasSuffix(k, ".crt") {
				assert.NotContains(t, s, strings.TrimSpace(string(v)), "the content of %s", k)
			}
		}
	}
}

func TestAKubeconfigWaitsForItsCopyAndHealsWhenItAppears(t *testing.T) {
	f := newFixture(t, kubeconfigFor("ci", toSecret(issuerCopy)))
	got := f.sync(t, "ci")

	valid := condition(t, got, operatorv1alpha1.ConditionReferenceValid)
	assert.Equal(t, metav1.ConditionFalse, valid.Status)
	assert.Equal(t, operatorv1alpha1.ReasonReferenceSecretNotFound, valid.Reason)
	assert.Equal(t, "Secret team-a/"+issuerCopy+" not found", valid.Message)
	assert.Equal(t, operatorv1alpha1.ReasonReferenceSecretNotFound, condition(t, got, operatorv1alpha1.ConditionAvailable).Reason)
	assert.Equal(t, "Secret/"+issuerCopy, got.Status.TargetName)
	assert.Empty(t, f.Host.Writes())

	// A copy without the reference label is not in the cache of copies: it is not used, and
	// the Kubeconfig says it is there without the label, with the command that labels it.
	f.Host.PutReference(t, controllertest.Unlabelled(copyOf(t, reference.KubeconfigIssuer)))
	got = f.sync(t, "ci")
	controllertest.AssertReferenceNotLabelled(t, got.Status.Conditions, issuerCopy, reference.KubeconfigIssuer)
	assert.Equal(t, operatorv1alpha1.ReasonReferenceSecretNotLabelled, condition(t, got, operatorv1alpha1.ConditionAvailable).Reason)
	assert.Contains(t, condition(t, got, operatorv1alpha1.ConditionReferenceValid).Message,
		"kubectl label secret "+issuerCopy+" -n team-a operator.kcp.io/reference=kubeconfig-issuer")
	assert.Empty(t, f.Host.Writes())

	// The label added heals it.

	f.setCopy(t, copyOf(t, reference.KubeconfigIssuer))
	got = f.sync(t, "ci")
	assert.Equal(t, metav1.ConditionTrue, condition(t, got, operatorv1alpha1.ConditionReferenceValid).Status)
	assert.Contains(t, f.Host.Writes(), "Certificate kubeconfig-ci")
	assert.Contains(t, f.Host.Writes(), "Issuer "+localSigner)
}

func TestACopyGoneBadDeletesNothingAndHeals(t *testing.T) {
	f, _ := convergedFromCopy(t)
	f.Host.Reset()

	bad := copyOf(t, reference.KubeconfigIssuer)
	bad.Data["root-shard-url"] = []byte("http://kcp.example.com")
	f.setCopy(t, bad)
	got := f.sync(t, "ci")
	valid := condition(t, got, operatorv1alpha1.ConditionReferenceValid)
	assert.Equal(t, operatorv1alpha1.ReasonReferenceSecretInvalid, valid.Reason)
	assert.Contains(t, valid.Message, `key "root-shard-url" holds no https URL`)
	assert.NotContains(t, valid.Message, "kcp.example.com", "the message never quotes the content")
	for _, a := range append(f.Host.Kube.Actions(), f.Host.CM.Actions()...) {
		assert.NotContains(t, []string{"delete", "delete-collection"}, a.GetVerb(), "nothing realized is deleted: %v", a)
	}
	assert.Empty(t, f.Host.Writes())
	f.Host.Secret(t, "team-a", "ci-kubeconfig")
	f.Host.Secret(t, "team-a", localSigner)

	f.setCopy(t, copyOf(t, reference.KubeconfigIssuer))
	got = f.sync(t, "ci")
	assert.Equal(t, operatorv1alpha1.KubeconfigPhaseReady, got.Status.Phase, "conditions: %+v", got.Status.Conditions)
	assert.Equal(t, operatorv1alpha1.ReasonReferencesFound, condition(t, got, operatorv1alpha1.ConditionReferenceValid).Reason)
}

func TestTheServerDoesNotBindInTheKcpOfACopy(t *testing.T) {
	kc := kubeconfigFor("ci", toSecret(issuerCopy))
	// Validation refuses this spec; one stored before it did is reported, not realized in kcp.
	kc.Spec.Authorization = &operatorv1alpha1.KubeconfigAuthorization{
		ClusterRoleBindings: operatorv1alpha1.KubeconfigClusterRoleBindings{ClusterRoles: []string{"cluster-admin"}}}
	f := newFixture(t, kc, copyOf(t, reference.KubeconfigIssuer))
	k := withKcp(t, f)
	got := f.sync(t, "ci")

	authz := condition(t, got, operatorv1alpha1.ConditionAuthorizationProvisioned)
	assert.Equal(t, metav1.ConditionFalse, authz.Status)
	assert.Equal(t, operatorv1alpha1.ReasonNoKcpIdentity, authz.Reason)
	assert.Contains(t, authz.Message, "remove spec.authorization")
	assert.Nil(t, got.Status.Authorization)
	assert.Empty(t, k.asked, "kcp is not reached")
	assert.Contains(t, f.Host.Writes(), "Certificate kubeconfig-ci", "the credential is issued all the same")
}

func TestDeletingAKubeconfigOfACopyDoesNotReachKcp(t *testing.T) {
	deleting := kubeconfigFor("ci", toSecret(issuerCopy))
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	// Even with a workspace recorded (which authorize never does for such a target).
	deleting.Status.Authorization = &operatorv1alpha1.KubeconfigAuthorizationStatus{ProvisionedCluster: "root"}
	f := newFixture(t, deleting)
	k := withKcp(t, f)
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/ci"))

	assert.Empty(t, k.asked, "kcp is not reached")
	var deletes []string
	for _, a := range append(f.Host.Kube.Actions(), f.Host.CM.Actions()...) {
		if dc, ok := a.(clienttesting.DeleteCollectionAction); ok {
			deletes = append(deletes, a.GetResource().Resource+" "+dc.GetListRestrictions().Labels.String())
		}
	}
	owned := "app.kubernetes.io/managed-by=kcp-setups,operator.kcp.io/kubeconfig=ci"
	assert.Contains(t, deletes, "issuers "+owned, "the local CA's Issuer")
	assert.Contains(t, deletes, "secrets "+owned, "the local CA, its bundle and the kubeconfig")
	got, err := f.Ours.OperatorV1alpha1().Kubeconfigs("team-a").Get(t.Context(), "ci", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, got.Finalizers)
}
