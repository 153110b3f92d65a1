package kubeconfig

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// events drains the events recorded so far.
func events(f *fixture) []string {
	var out []string
	for {
		select {
		case e := <-f.Events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestAMissingTargetIsReportedAndHeals(t *testing.T) {
	for _, tc := range []struct {
		name       string
		target     operatorv1alpha1.KubeconfigTarget
		objs       []metav1.Object
		reason     string
		targetName string
		message    string
		heal       metav1.Object
	}{
		{name: "root shard", target: operatorv1alpha1.KubeconfigTarget{RootShardRef: &corev1.LocalObjectReference{Name: "root"}},
			reason: operatorv1alpha1.ReasonRootShardNotFound, targetName: "RootShard/root",
			message: `RootShard "root" does not exist in namespace "team-a"`, heal: rootShard("root")},
		{name: "shard", target: operatorv1alpha1.KubeconfigTarget{ShardRef: &corev1.LocalObjectReference{Name: "beta"}},
			objs:   []metav1.Object{rootShard("root")},
			reason: operatorv1alpha1.ReasonShardNotFound, targetName: "Shard/beta",
			message: `Shard "beta" does not exist in namespace "team-a"`, heal: shard("beta", "root")},
		{name: "front proxy", target: toFrontProxy("edge"), objs: []metav1.Object{rootShard("root")},
			reason: operatorv1alpha1.ReasonFrontProxyNotFound, targetName: "FrontProxy/edge",
			message: `FrontProxy "edge" does not exist in namespace "team-a"`, heal: frontProxy("edge", "root")},
		{name: "the front proxy's root shard", target: toFrontProxy("edge"), objs: []metav1.Object{frontProxy("edge", "root")},
			reason: operatorv1alpha1.ReasonRootShardNotFound, targetName: "FrontProxy/edge",
			message: `RootShard "root" of FrontProxy "edge" does not exist in namespace "team-a"`, heal: rootShard("root")},
		{name: "the shard's root shard", target: operatorv1alpha1.KubeconfigTarget{ShardRef: &corev1.LocalObjectReference{Name: "beta"}},
			objs:   []metav1.Object{shard("beta", "root")},
			reason: operatorv1alpha1.ReasonRootShardNotFound, targetName: "Shard/beta",
			message: `RootShard "root" of Shard "beta" does not exist in namespace "team-a"`, heal: rootShard("root")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, append(tc.objs, kubeconfigFor("ci", tc.target), caBundle("root"))...)
			got := f.sync(t, "ci")

			assert.Equal(t, operatorv1alpha1.KubeconfigPhaseProvisioning, got.Status.Phase)
			assert.Equal(t, tc.targetName, got.Status.TargetName)
			ref := meta.FindStatusCondition(got.Status.Conditions, operatorv1alpha1.ConditionReferenceValid)
			require.NotNil(t, ref)
			assert.Equal(t, metav1.ConditionFalse, ref.Status)
			assert.Equal(t, tc.reason, ref.Reason)
			assert.Equal(t, tc.message, ref.Message)
			assert.Empty(t, f.Host.Writes(), "nothing is applied without a target")
			assert.Equal(t, []string{"Warning " + tc.reason + " " + tc.message}, events(f))

			f.sync(t, "ci")
			assert.Empty(t, events(f), "a resync does not repeat the Event")

			// The object's informer event brings the Kubeconfig back, and it heals.
			switch o := tc.heal.(type) {
			case *operatorv1alpha1.RootShard:
				require.NoError(t, f.Caches.RootShards.Add(o))
				assert.Equal(t, []string{"team-a/ci"}, f.c.ofRootShard("team-a", o.Name))
			case *operatorv1alpha1.Shard:
				require.NoError(t, f.Caches.Shards.Add(o))
				assert.Equal(t, []string{"team-a/ci"}, f.c.targeting("team-a", "Shard", o.Name))
			case *operatorv1alpha1.FrontProxy:
				require.NoError(t, f.Caches.FrontProxies.Add(o))
				assert.Equal(t, []string{"team-a/ci"}, f.c.targeting("team-a", "FrontProxy", o.Name))
			}
			got = f.sync(t, "ci")
			ref = meta.FindStatusCondition(got.Status.Conditions, operatorv1alpha1.ConditionReferenceValid)
			require.NotNil(t, ref)
			assert.Equal(t, metav1.ConditionTrue, ref.Status)
			assert.Equal(t, tc.targetName, got.Status.TargetName)
			assert.Contains(t, f.Host.Writes(), "Certificate kubeconfig-ci")
		})
	}
}

func TestUnrealizableKubeconfigsFail(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  func(*operatorv1alpha1.Kubeconfig)
		secrets []*corev1.Secret
		reason  string
		message string
	}{
		{name: "the user's own Secret",
			secrets: []*corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "ci-kubeconfig"}}},
			reason:  operatorv1alpha1.ReasonSecretConflict, message: "the Secret ci-kubeconfig exists"},
		{name: "a RootShard's Secret",
			change: func(kc *operatorv1alpha1.Kubeconfig) { kc.Spec.SecretRef.Name = "root-merged-ca-bundle" },
			reason: operatorv1alpha1.ReasonSecretConflict, message: "the Secret root-merged-ca-bundle exists"},
		{name: "cert-manager's Secret",
			change: func(kc *operatorv1alpha1.Kubeconfig) { kc.Spec.SecretRef.Name = "kubeconfig-ci" },
			reason: operatorv1alpha1.ReasonSecretConflict, message: "the Secret cert-manager issues"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kc := kubeconfigFor("ci", toFrontProxy("edge"))
			if tc.change != nil {
				tc.change(kc)
			}
			f := newFixture(t, kc, rootShard("root"), frontProxy("edge", "root"), caBundle("root"))
			for _, s := range tc.secrets {
				_, err := f.Host.Kube.CoreV1().Secrets(s.Namespace).Create(t.Context(), s, metav1.CreateOptions{})
				require.NoError(t, err)
			}
			f.Host.Reset()
			got := f.sync(t, "ci")

			assert.Equal(t, operatorv1alpha1.KubeconfigPhaseFailed, got.Status.Phase)
			assert.Equal(t, "FrontProxy/edge", got.Status.TargetName)
			available := meta.FindStatusCondition(got.Status.Conditions, operatorv1alpha1.ConditionAvailable)
			require.NotNil(t, available)
			assert.Equal(t, metav1.ConditionFalse, available.Status)
			assert.Equal(t, tc.reason, available.Reason)
			assert.Contains(t, available.Message, tc.message)
			assert.True(t, meta.IsStatusConditionTrue(got.Status.Conditions, operatorv1alpha1.ConditionReferenceValid))
			assert.Empty(t, f.Host.Writes(), "nothing is applied")
			evs := events(f)
			require.Len(t, evs, 1)
			assert.True(t, strings.HasPrefix(evs[0], "Warning "+tc.reason+" "), evs[0])
		})
	}
}

func TestHostEventsMapToTheirKubeconfigs(t *testing.T) {
	f := newFixture(t,
		kubeconfigFor("to-root", operatorv1alpha1.KubeconfigTarget{RootShardRef: &corev1.LocalObjectReference{Name: "root"}}),
		kubeconfigFor("to-shard", operatorv1alpha1.KubeconfigTarget{ShardRef: &corev1.LocalObjectReference{Name: "beta"}}),
		kubeconfigFor("to-edge", toFrontProxy("edge")),
		kubeconfigFor("elsewhere", toFrontProxy("other-edge")),
		shard("beta", "root"), frontProxy("edge", "root"), frontProxy("other-edge", "other"))

	assert.ElementsMatch(t, []string{"team-a/to-root", "team-a/to-shard", "team-a/to-edge"}, f.c.Watches().Owners(f.c.Name)(caBundle("root")),
		"the merged CA bundle is in every kubeconfig toward the RootShard, its Shards and FrontProxies")
	assert.Equal(t, []string{"team-a/elsewhere"}, f.c.Watches().Owners(f.c.Name)(caBundle("other")))
	otherSecret := caBundle("root")
	otherSecret.Name = "root-server-ca"
	assert.Empty(t, f.c.Watches().Owners(f.c.Name)(otherSecret), "another of the RootShard's Secrets")
	owned := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "kubeconfig-to-edge",
		Labels: map[string]string{"operator.kcp.io/kubeconfig": "to-edge"}}}
	assert.Equal(t, []string{"team-a/to-edge"}, f.c.Watches().Owners(f.c.Name)(owned))
	assert.Equal(t, []string{"team-a/to-shard"}, f.c.targeting("team-a", "Shard", "beta"))
	assert.Equal(t, []string{"team-a/elsewhere"}, f.c.targeting("team-a", "FrontProxy", "other-edge"))
}
