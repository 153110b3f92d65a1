package kubeconfig

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/kcpclient"
	"github.com/kcp-setups/apiserver/pkg/resources/kubeconfig"
)

func authorizationCondition(t *testing.T, kc *operatorv1alpha1.Kubeconfig) metav1.Condition {
	t.Helper()
	c := meta.FindStatusCondition(kc.Status.Conditions, operatorv1alpha1.ConditionAuthorizationProvisioned)
	require.NotNil(t, c, "conditions: %+v", kc.Status.Conditions)
	return *c
}

func TestTheWorkspaceIsRecordedBeforeAnyBindingIsCreated(t *testing.T) {
	f := newFixture(t, authorizing("view", "edit"), rootShard("root"), frontProxy("edge", "root"), caBundle("root"))
	k := withKcp(t, f)

	got := f.sync(t, "ci")
	require.NotNil(t, got.Status.Authorization)
	assert.Equal(t, "root", got.Status.Authorization.ProvisionedCluster)
	assert.Empty(t, k.asked, "nothing in kcp before the workspace is stored in the status")
	cond := authorizationCondition(t, got)
	assert.Equal(t, metav1.ConditionFalse, cond.Status)
	assert.Equal(t, operatorv1alpha1.ReasonProvisioning, cond.Reason)

	got = f.sync(t, "ci")
	assert.Equal(t, []string{"root root"}, k.asked, "through the FrontProxy's RootShard, in the workspace recorded")
	assert.ElementsMatch(t, []string{"root patch " + bindingName("view"), "root patch " + bindingName("edit")}, k.writes())
	cond = authorizationCondition(t, got)
	assert.Equal(t, metav1.ConditionTrue, cond.Status)
	assert.Equal(t, operatorv1alpha1.ReasonProvisioned, cond.Reason)
}

func TestOneBindingPerRoleForTheKubeconfigsGroup(t *testing.T) {
	_, k, _ := provisioned(t, "view", "edit")
	bindings := k.bindings(t, "root")
	require.Len(t, bindings, 2)
	for _, role := range []string{"view", "edit"} {
		b, ok := bindings[bindingName(role)]
		require.True(t, ok, role)
		assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}, b.RoleRef)
		assert.Equal(t, []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "kubeconfig:team-a:ci"}}, b.Subjects)
		assert.Equal(t, "team-a/ci", b.Annotations[kubeconfig.OwnerAnnotation])
	}
}

// TestABindingOfKcpOperatorsGroupIsRewritten: a binding written for the group
// kubeconfig:<name> (before the group had the namespace, as kcp-operator's has not) keeps its
// name, which always had the namespace, and is rewritten in place for kubeconfig:<ns>:<name>
// on the next reconcile: no binding of the old group is left for another namespace's
// Kubeconfig of the same name.
func TestABindingOfKcpOperatorsGroupIsRewritten(t *testing.T) {
	f, k, _ := provisioned(t, "view")
	crbs := k.workspace("root").RbacV1().ClusterRoleBindings()
	b, err := crbs.Get(t.Context(), bindingName("view"), metav1.GetOptions{})
	require.NoError(t, err)
	b.Subjects = []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "kubeconfig:ci"}}
	_, err = crbs.Update(t.Context(), b, metav1.UpdateOptions{})
	require.NoError(t, err)
	k.log = nil

	f.sync(t, "ci")
	assert.Equal(t, []string{"root patch " + bindingName("view")}, k.writes())
	got := k.bindings(t, "root")
	require.Len(t, got, 1)
	assert.Equal(t, []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "kubeconfig:team-a:ci"}}, got[bindingName("view")].Subjects)
}

func TestBindingsGoThroughTheTargetsRootShard(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target operatorv1alpha1.KubeconfigTarget
	}{
		{"RootShard", operatorv1alpha1.KubeconfigTarget{RootShardRef: &corev1.LocalObjectReference{Name: "alpha"}}},
		{"Shard", operatorv1alpha1.KubeconfigTarget{ShardRef: &corev1.LocalObjectReference{Name: "s1"}}},
		{"FrontProxy", toFrontProxy("edge")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kc := authorizing("view")
			kc.Spec.Target = tc.target
			kc.Spec.TargetWorkspace = "root:team"
			f := newFixture(t, kc, rootShard("alpha"), rootShard("beta"), shard("s1", "alpha"), frontProxy("edge", "alpha"))
			k := withKcp(t, f)
			f.sync(t, "ci")
			f.sync(t, "ci")
			assert.Equal(t, []string{"alpha root:team"}, k.asked)
			assert.Contains(t, k.bindings(t, "root:team"), bindingName("view"))
		})
	}
}

func TestTheDeprecatedClusterIsHonoured(t *testing.T) {
	kc := authorizing("view")
	kc.Spec.Authorization.ClusterRoleBindings.Cluster = "root:legacy"
	f := newFixture(t, kc, rootShard("root"), frontProxy("edge", "root"))
	k := withKcp(t, f)
	got := f.sync(t, "ci")
	assert.Equal(t, "root:legacy", got.Status.Authorization.ProvisionedCluster)
	f.sync(t, "ci")
	assert.Contains(t, k.bindings(t, "root:legacy"), bindingName("view"))
}

func TestAResyncOfProvisionedBindingsWritesNothing(t *testing.T) {
	f, k, _ := provisioned(t, "view", "edit")
	k.log = nil
	f.Host.Reset()
	f.Ours.ClearActions()
	f.events()

	got := f.sync(t, "ci")
	assert.Empty(t, k.writes(), "nothing changed: nothing is written to kcp")
	assert.Empty(t, f.Host.Writes(f.Ours.Actions()), "nor to the host, nor to the status")
	assert.Empty(t, f.events())
	assert.Equal(t, operatorv1alpha1.ReasonProvisioned, authorizationCondition(t, got).Reason)
}

func TestADriftedBindingIsRestored(t *testing.T) {
	f, k, _ := provisioned(t, "view")
	b := k.bindings(t, "root")[bindingName("view")]
	b.Subjects = append(b.Subjects, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "intruders"})
	_, err := k.workspace("root").RbacV1().ClusterRoleBindings().Update(t.Context(), &b, metav1.UpdateOptions{})
	require.NoError(t, err)
	k.log = nil

	f.sync(t, "ci")
	assert.Equal(t, []string{"root patch " + bindingName("view")}, k.writes())
	assert.Len(t, k.bindings(t, "root")[bindingName("view")].Subjects, 1)
}

func TestRemovingARoleDeletesItsBinding(t *testing.T) {
	f, k, got := provisioned(t, "view", "edit")
	got = got.DeepCopy()
	got.Spec.Authorization.ClusterRoleBindings.ClusterRoles = []string{"view"}
	f.update(t, got)
	k.log = nil

	got = f.sync(t, "ci")
	assert.Equal(t, []string{"root delete " + bindingName("edit")}, k.writes())
	assert.Equal(t, []string{bindingName("view")}, keys(k.bindings(t, "root")))
	assert.Equal(t, operatorv1alpha1.ReasonProvisioned, authorizationCondition(t, got).Reason)
	assert.Equal(t, operatorv1alpha1.KubeconfigPhaseReady, got.Status.Phase)
}

func TestRemovingAuthorizationRemovesTheBindings(t *testing.T) {
	f, k, got := provisioned(t, "view", "edit")
	got = got.DeepCopy()
	got.Spec.Authorization = nil
	f.update(t, got)

	got = f.sync(t, "ci")
	assert.Empty(t, k.bindings(t, "root"))
	assert.Nil(t, got.Status.Authorization, "provisionedCluster is cleared")
	assert.Nil(t, meta.FindStatusCondition(got.Status.Conditions, operatorv1alpha1.ConditionAuthorizationProvisioned))

	// The certificate without the group kubeconfig:team-a:ci is issued; then the Kubeconfig is Ready.
	f.Host.CatchUp(t)
	got = f.sync(t, "ci")
	assert.Equal(t, operatorv1alpha1.KubeconfigPhaseReady, got.Status.Phase)
}

func TestAMovedWorkspaceIsCleanedFirst(t *testing.T) {
	f, k, got := provisioned(t, "view")
	got = got.DeepCopy()
	got.Spec.TargetWorkspace = "root:team"
	f.update(t, got)
	k.log = nil

	got = f.sync(t, "ci")
	assert.Equal(t, []string{"root delete " + bindingName("view")}, k.writes(), "the old workspace is emptied, nothing created yet")
	assert.Equal(t, "root:team", got.Status.Authorization.ProvisionedCluster)
	assert.Equal(t, operatorv1alpha1.KubeconfigPhaseProvisioning, got.Status.Phase)

	got = f.sync(t, "ci")
	assert.Contains(t, k.bindings(t, "root:team"), bindingName("view"))
	assert.Equal(t, operatorv1alpha1.KubeconfigPhaseReady, got.Status.Phase)
}

func TestWithoutAuthorizationKcpIsNotTouched(t *testing.T) {
	f := newFixture(t, kubeconfigFor("ci", toFrontProxy("edge")), rootShard("root"), frontProxy("edge", "root"), caBundle("root"))
	k := withKcp(t, f)
	f.sync(t, "ci")
	f.issue(t, "ci", time.Now().Add(24*time.Hour), "1")
	got := f.sync(t, "ci")
	assert.Empty(t, k.asked)
	assert.Nil(t, got.Status.Authorization)
	assert.Nil(t, meta.FindStatusCondition(got.Status.Conditions, operatorv1alpha1.ConditionAuthorizationProvisioned))
	assert.Equal(t, operatorv1alpha1.KubeconfigPhaseReady, got.Status.Phase)
}

var crbs = schema.GroupResource{Group: rbacv1.GroupName, Resource: "clusterrolebindings"}

// kcpFailures are the ways kcp fails, and the reason each is reported with.
var kcpFailures = []struct {
	name     string
	notReady bool
	fail     error
	reason   string
}{
	{name: "identity not issued", notReady: true, reason: operatorv1alpha1.ReasonWaitingForCredentials},
	{name: "connection refused", fail: &netError{syscall.ECONNREFUSED}, reason: operatorv1alpha1.ReasonKcpUnreachable},
	{name: "503", fail: apierrors.NewServiceUnavailable("kcp is starting"), reason: operatorv1alpha1.ReasonKcpUnreachable},
	{name: "429", fail: apierrors.NewTooManyRequests("slow down", 1), reason: operatorv1alpha1.ReasonKcpUnreachable},
	{name: "403", fail: apierrors.NewForbidden(crbs, "", errors.New("system:kcp-operator may not")), reason: operatorv1alpha1.ReasonKcpRefused},
	{name: "404 workspace", fail: apierrors.NewNotFound(schema.GroupResource{Resource: "workspaces"}, "root:team"), reason: operatorv1alpha1.ReasonKcpRefused},
}

// netError is what a dial that kcp refuses returns.
type netError struct{ errno syscall.Errno }

func (e *netError) Error() string   { return "dial tcp 10.0.0.1:6443: " + e.errno.Error() }
func (e *netError) Unwrap() error   { return e.errno }
func (e *netError) Timeout() bool   { return false }
func (e *netError) Temporary() bool { return false }

func TestAFailingKcpIsAConditionAndTheHostIsStillRealized(t *testing.T) {
	for _, tc := range kcpFailures {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, authorizing("view"), rootShard("root"), frontProxy("edge", "root"), caBundle("root"))
			k := withKcp(t, f)
			k.notReady, k.fail = tc.notReady, tc.fail
			f.sync(t, "ci") // records the workspace
			f.issue(t, "ci", time.Now().Add(24*time.Hour), "1")
			f.events()

			got, err := f.syncFailing(t, "ci")
			assert.Contains(t, err.Error(), "workspace root", "the failure is returned, for the queue's backoff")
			written(t, f) // the kubeconfig Secret is written all the same
			cond := authorizationCondition(t, got)
			assert.Equal(t, metav1.ConditionFalse, cond.Status)
			assert.Equal(t, tc.reason, cond.Reason)
			synced := meta.FindStatusCondition(got.Status.Conditions, operatorv1alpha1.ConditionSynced)
			require.NotNil(t, synced)
			assert.Equal(t, metav1.ConditionTrue, synced.Status, "Synced is about the host")
			available := meta.FindStatusCondition(got.Status.Conditions, operatorv1alpha1.ConditionAvailable)
			assert.Equal(t, metav1.ConditionTrue, available.Status)
			assert.Equal(t, operatorv1alpha1.KubeconfigPhaseProvisioning, got.Status.Phase, "not Ready while the roles are not bound")
			assert.Len(t, eventsWith(f.events(), tc.reason), 1)

			// The same failure again: no new Event, no status write.
			f.Ours.ClearActions()
			f.Host.Reset()
			f.syncFailing(t, "ci")
			assert.Empty(t, eventsWith(f.events(), tc.reason))
			assert.Empty(t, f.Host.Writes(f.Ours.Actions()))

			k.notReady, k.fail = false, nil
			got = f.sync(t, "ci")
			assert.Equal(t, operatorv1alpha1.ReasonProvisioned, authorizationCondition(t, got).Reason)
			assert.Equal(t, operatorv1alpha1.KubeconfigPhaseReady, got.Status.Phase)
		})
	}
}

func TestKcpFailureReasons(t *testing.T) {
	for _, tc := range kcpFailures {
		if tc.fail != nil {
			assert.Equal(t, tc.reason, kcpFailureReason(tc.fail), tc.name)
		}
	}
	assert.Equal(t, operatorv1alpha1.ReasonKcpUnreachable, kcpFailureReason(errNoKcpClients))
	assert.Equal(t, operatorv1alpha1.ReasonKcpUnreachable, kcpFailureReason(apierrors.NewTimeoutError("slow", 1)))
}

// deleting is a Kubeconfig ci being deleted whose bindings of roles are in root, and a fake
// kcp that holds them.
func deleting(t *testing.T, mutate func(*operatorv1alpha1.Kubeconfig), objs ...metav1.Object) (*fixture, *fakeKcp) {
	kc := authorizing("view", "edit")
	now := metav1.Now()
	kc.DeletionTimestamp = &now
	kc.Status.Authorization = &operatorv1alpha1.KubeconfigAuthorizationStatus{ProvisionedCluster: "root"}
	if mutate != nil {
		mutate(kc)
	}
	f := newFixture(t, append([]metav1.Object{kc}, objs...)...)
	k := withKcp(t, f)
	for _, b := range kubeconfig.Bindings(kc) {
		_, err := k.workspace("root").RbacV1().ClusterRoleBindings().Apply(t.Context(), b, hostcluster.ApplyOptions)
		require.NoError(t, err)
	}
	k.log = nil
	return f, k
}

func finalizers(t *testing.T, f *fixture) []string {
	got, err := f.Ours.OperatorV1alpha1().Kubeconfigs("team-a").Get(t.Context(), "ci", metav1.GetOptions{})
	require.NoError(t, err)
	return got.Finalizers
}

func TestDeletionRemovesTheBindingsBeforeTheSecret(t *testing.T) {
	f, k := deleting(t, nil, rootShard("root"), frontProxy("edge", "root"))
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/ci"))

	require.GreaterOrEqual(t, len(k.log), 3)
	assert.ElementsMatch(t, []string{"kcp root delete " + bindingName("view"), "kcp root delete " + bindingName("edit")}, k.log[:2])
	assert.Contains(t, k.log[2:], "host delete-collection secrets")
	assert.Empty(t, k.bindings(t, "root"))
	assert.Empty(t, finalizers(t, f))
}

func TestDeletionWaitsWhileKcpFails(t *testing.T) {
	f, k := deleting(t, nil, rootShard("root"), frontProxy("edge", "root"))
	k.fail = &netError{syscall.ECONNREFUSED}

	got, _ := f.syncFailing(t, "ci")
	assert.Empty(t, k.log, "nothing of the host is deleted while the bindings remain")
	assert.Equal(t, []string{kinds.Kubeconfig.Finalizer()}, got.Finalizers)
	assert.Equal(t, operatorv1alpha1.ReasonKcpUnreachable, authorizationCondition(t, got).Reason)
	assert.Equal(t, "root", got.Status.Authorization.ProvisionedCluster)
	assert.Len(t, eventsWith(f.events(), operatorv1alpha1.ReasonKcpUnreachable), 1)

	k.fail = nil
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/ci"))
	assert.Empty(t, k.bindings(t, "root"))
	assert.Empty(t, finalizers(t, f))
}

func TestTheSkipAnnotationLetsTheKubeconfigGo(t *testing.T) {
	f, k := deleting(t, func(kc *operatorv1alpha1.Kubeconfig) {
		kc.Annotations = map[string]string{operatorv1alpha1.AnnotationSkipKcpCleanup: "true"}
	}, rootShard("root"), frontProxy("edge", "root"))
	k.fail = &netError{syscall.ECONNREFUSED}

	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/ci"))
	assert.Empty(t, k.asked, "kcp is not asked")
	k.fail = nil
	assert.Len(t, k.bindings(t, "root"), 2, "the bindings stay")
	assert.Empty(t, finalizers(t, f))
	assert.Len(t, eventsWith(f.events(), EventKcpCleanupSkipped), 1)
}

func TestAGoneRootShardHasNothingToClean(t *testing.T) {
	for _, tc := range []struct {
		name string
		objs []metav1.Object
	}{
		{"RootShard gone", []metav1.Object{frontProxy("edge", "root")}},
		{"FrontProxy and every RootShard gone", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, k := deleting(t, nil, tc.objs...)
			require.NoError(t, f.c.SyncKey(t.Context(), "team-a/ci"))
			assert.Empty(t, k.asked)
			assert.Empty(t, finalizers(t, f))
			assert.Len(t, eventsWith(f.events(), EventKcpGone), 1)
		})
	}
}

func TestAGoneTargetWithRootShardsLeftWaits(t *testing.T) {
	f, k := deleting(t, nil, rootShard("root"))
	got, _ := f.syncFailing(t, "ci")
	assert.Empty(t, k.asked)
	assert.Equal(t, []string{kinds.Kubeconfig.Finalizer()}, got.Finalizers)
	cond := authorizationCondition(t, got)
	assert.Equal(t, operatorv1alpha1.ReasonRootShardUnknown, cond.Reason)
	assert.Contains(t, cond.Message, operatorv1alpha1.AnnotationSkipKcpCleanup)
}

func TestDeletionWithoutBindingsAsksNoKcp(t *testing.T) {
	f, k := deleting(t, func(kc *operatorv1alpha1.Kubeconfig) {
		kc.Spec.Authorization, kc.Status.Authorization = nil, nil
	}, rootShard("root"), frontProxy("edge", "root"))
	k.fail = &netError{syscall.ECONNREFUSED}
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/ci"))
	assert.Empty(t, k.asked)
	assert.Empty(t, finalizers(t, f))
}

// eventsWith are the Events ("Warning Reason message") whose reason is reason.
func eventsWith(events []string, reason string) []string {
	var out []string
	for _, e := range events {
		if strings.HasPrefix(e, corev1.EventTypeWarning+" "+reason+" ") || strings.HasPrefix(e, corev1.EventTypeNormal+" "+reason+" ") {
			out = append(out, e)
		}
	}
	return out
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestWithoutADialerAuthorizationIsUnknown: a server told that no kcp can be reached
// (--kcp-dialer=none) says so in AuthorizationProvisioned, Unknown, and does not retry:
// nothing changes until it is told otherwise.
func TestWithoutADialerAuthorizationIsUnknown(t *testing.T) {
	f := newFixture(t, authorizing("view"), rootShard("root"), frontProxy("edge", "root"), caBundle("root"))
	k := withKcp(t, f)
	f.Host.NoKcpDialer = true
	k.fail = fmt.Errorf("dial: %w", kcpclient.ErrNoDialer)
	f.sync(t, "ci") // records the workspace
	f.issue(t, "ci", time.Now().Add(24*time.Hour), "1")
	f.events()

	got := f.sync(t, "ci") // no error: not retried
	written(t, f)
	cond := authorizationCondition(t, got)
	assert.Equal(t, metav1.ConditionUnknown, cond.Status)
	assert.Equal(t, operatorv1alpha1.ReasonNoKcpDialer, cond.Reason)
	assert.Contains(t, cond.Message, "writing the ClusterRoleBindings in workspace root: "+kcpclient.ErrNoDialer.Error())
	for _, e := range f.events() {
		assert.False(t, strings.HasPrefix(e, "Warning"), e)
	}
}

// TestWithoutADialerTheKubeconfigGoes: deleting a Kubeconfig whose bindings were recorded
// does not wait for a kcp the server is told it cannot reach; an Event says that they stay.
func TestWithoutADialerTheKubeconfigGoes(t *testing.T) {
	f, k := deleting(t, nil, rootShard("root"), frontProxy("edge", "root"))
	f.Host.NoKcpDialer = true

	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/ci"))
	assert.Empty(t, k.asked, "kcp is not asked")
	assert.Empty(t, finalizers(t, f))
	skipped := eventsWith(f.events(), EventKcpCleanupSkipped)
	require.Len(t, skipped, 1)
	assert.Contains(t, skipped[0], "--kcp-dialer=none")
}
