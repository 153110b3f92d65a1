package e2e

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	"github.com/kcp-setups/apiserver/test/framework"
)

// counter is the sum of a counter's series on srv's /metrics whose labels contain labels.
func counter(t *testing.T, srv *framework.ServerProcess, name, labels string) int {
	t.Helper()
	raw, err := kubernetes.NewForConfigOrDie(srv.Config()).Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	require.NoError(t, err)
	series := regexp.MustCompile(`(?m)^` + name + `\{([^}]*)\} ([0-9.e+]+)$`)
	sum := 0
	for _, m := range series.FindAllStringSubmatch(string(raw), -1) {
		if strings.Contains(m[1], labels) {
			v, err := strconv.ParseFloat(m[2], 64)
			require.NoError(t, err)
			sum += int(v)
		}
	}
	return sum
}

// withVerbs leaves, in the ClusterRole role's rules on resource (group apps), only the verbs
// keep keeps, and returns what puts them back. Each waits until the host's authorizer answers
// user's SubjectAccessReviews by the new rules: the RBAC authorizer reads ClusterRoles from
// an informer, so a write the server makes right after the update could still be allowed.
func withVerbs(t *testing.T, user, role, resource string, keep func(string) bool) func() {
	t.Helper()
	before := rulesOf(t, role)
	var removed []string
	set := func(ctx context.Context, rules []rbacv1.PolicyRule, allowed bool) {
		r, err := stack.Kube.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{})
		require.NoError(t, err)
		r.Rules = rules
		_, err = stack.Kube.RbacV1().ClusterRoles().Update(ctx, r, metav1.UpdateOptions{})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			for _, verb := range removed {
				sar, err := stack.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
					Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: &authorizationv1.ResourceAttributes{
						Verb: verb, Group: "apps", Resource: resource}}}, metav1.CreateOptions{})
				if err != nil || sar.Status.Allowed != allowed {
					return false
				}
			}
			return true
		}, 30*time.Second, 100*time.Millisecond, "the host's authorizer answers by the new rules")
	}
	var narrowed []rbacv1.PolicyRule
	for _, r := range before {
		r = *r.DeepCopy()
		if slices.Contains(r.Resources, resource) {
			for _, v := range r.Verbs {
				if !keep(v) && !slices.Contains(removed, v) {
					removed = append(removed, v)
				}
			}
			r.Verbs = slices.DeleteFunc(r.Verbs, func(v string) bool { return !keep(v) })
		}
		narrowed = append(narrowed, r)
	}
	require.NotEmpty(t, removed, "the role grants a verb to take away")
	set(t.Context(), narrowed, false)
	return func() { set(context.Background(), before, true) }
}

// TestHostRefusingWritesBacksOffAndHeals runs a server as the install manifests'
// ServiceAccount and takes away its right to write Deployments while a RootShard's changes.
// The RootShard says why in Synced and in a Warning Event, both with reason Forbidden; the
// server retries with backoff, not in a loop; and once the rule is back, the setup converges
// without a restart.
func TestHostRefusingWritesBacksOffAndHeals(t *testing.T) {
	parallel(t, alone)
	ctx := t.Context()
	const serverNS = "host-forbidden-server"
	port, args := asTheManifestsServiceAccount(t, "kcp-setups-sa-host-forbidden", serverNS)
	// A storage prefix of its own: the stack's server neither sees nor realizes its setups,
	// and it leads on the manifests' Lease, not the stack's.
	args = append(args, "--etcd-prefix=/kcp-setups-host-forbidden")
	lease := func() error {
		err := stack.Kube.CoordinationV1().Leases(serverNS).Delete(context.Background(), "kcp-setups-controllers", metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	require.NoError(t, lease(), "no earlier holder to wait for")
	t.Cleanup(func() { _ = lease() })
	srv, err := stack.StartServerProcess(ctx, "kcp-setups-host-forbidden", port, args)
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	ops := clientset.NewForConfigOrDie(srv.Config()).OperatorV1alpha1()

	ns := namespace(t, "host-forbidden")
	_, err = ops.RootShards(ns).Create(ctx, &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root"},
		Spec: operatorv1alpha1.RootShardSpec{External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com"},
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"}}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	// Everything the server created goes with the RootShard, through the server, before the
	// server stops (cleanups run last in, first out).
	t.Cleanup(func() {
		ctx := context.Background()
		_ = ops.RootShards(ns).Delete(ctx, "root", metav1.DeleteOptions{})
		assert.Eventually(t, func() bool {
			_, err := ops.RootShards(ns).Get(ctx, "root", metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		}, 2*time.Minute, time.Second, "the RootShard is deleted, and what it owned")
	})
	synced := func() (*operatorv1alpha1.RootShard, *metav1.Condition) {
		rs, err := ops.RootShards(ns).Get(ctx, "root", metav1.GetOptions{})
		if err != nil {
			return nil, nil
		}
		return rs, meta.FindStatusCondition(rs.Status.Conditions, operatorv1alpha1.ConditionSynced)
	}
	running := func() bool {
		rs, c := synced()
		return rs != nil && rs.Status.Phase == operatorv1alpha1.PhaseRunning && c != nil && c.Status == metav1.ConditionTrue
	}
	if !assert.Eventually(t, running, 3*time.Minute, time.Second, "the RootShard is realized") {
		t.Fatalf("the server's log:\n%s", tail(srv.Log()))
	}

	// The host refuses the server's writes of Deployments; it still lists and watches them.
	restore := withVerbs(t, "system:serviceaccount:"+serverNS+":kcp-setups", serverNS+":apiserver", "deployments", func(v string) bool { return v != "create" && v != "patch" })
	defer restore()
	failedBefore := counter(t, srv, "kcp_setups_host_writes_total", `kind="Deployment",result="Forbidden"`)
	errorsBefore := counter(t, srv, "kcp_setups_reconciles_total", `kind="rootshard",result="error"`)
	start := time.Now()
	_, err = ops.RootShards(ns).Patch(ctx, "root", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{})
	require.NoError(t, err)

	// The RootShard says why, in its status and in an Event.
	const denied = `cannot patch resource "deployments" in API group "apps"`
	var last *metav1.Condition
	if !assert.Eventually(t, func() bool {
		_, last = synced()
		return last != nil && last.Status == metav1.ConditionFalse
	}, time.Minute, time.Second, "Synced turns False") {
		t.Fatalf("Synced: %+v\nthe server's log:\n%s", last, tail(srv.Log()))
	}
	assert.Equal(t, "Forbidden", last.Reason)
	assert.Contains(t, last.Message, "applying Deployment "+ns+"/root-kcp")
	assert.Contains(t, last.Message, denied)
	var warning *corev1.Event
	assert.Eventually(t, func() bool {
		events, err := stack.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=root"})
		if err != nil {
			return false
		}
		for i, e := range events.Items {
			if e.InvolvedObject.Kind == "RootShard" && e.Type == corev1.EventTypeWarning && e.Reason == "Forbidden" {
				warning = &events.Items[i]
			}
		}
		return warning != nil
	}, 30*time.Second, time.Second, "a Warning Event with reason Forbidden")
	if warning != nil {
		assert.Contains(t, warning.Message, denied)
	}

	// Meanwhile the server retries with backoff: over a window, at most 2 attempts a second
	// on average for the one object it may not write. A loop without backoff makes
	// hundreds a second. The counters are this server's own, and its storage prefix holds
	// nothing but this RootShard: other tests' objects on the shared stack cannot add to
	// them.
	time.Sleep(20 * time.Second)
	failed := counter(t, srv, "kcp_setups_host_writes_total", `kind="Deployment",result="Forbidden"`) - failedBefore
	reconcileErrors := counter(t, srv, "kcp_setups_reconciles_total", `kind="rootshard",result="error"`) - errorsBefore
	seconds := time.Since(start).Seconds()
	t.Logf("%d refused writes of the Deployment and %d failed reconciles in %.0f s", failed, reconcileErrors, seconds)
	assert.GreaterOrEqual(t, failed, 2, "the refused write is retried")
	assert.LessOrEqual(t, float64(failed), 2*seconds, "the retries back off")
	assert.LessOrEqual(t, float64(reconcileErrors), 2*seconds, "the reconciles back off")
	d, err := stack.Kube.AppsV1().Deployments(ns).Get(ctx, "root-kcp", metav1.GetOptions{})
	require.NoError(t, err)
	assert.NotEqualValues(t, 3, *d.Spec.Replicas, "the write was refused")

	// The rule comes back: the setup converges, without a restart.
	restore()
	require.Eventually(t, func() bool {
		d, err := stack.Kube.AppsV1().Deployments(ns).Get(ctx, "root-kcp", metav1.GetOptions{})
		return err == nil && *d.Spec.Replicas == 3
	}, 3*time.Minute, time.Second, "the Deployment follows spec.replicas once the server may write it")
	if !assert.Eventually(t, running, 2*time.Minute, time.Second, "the RootShard is Synced and Running again") {
		_, c := synced()
		t.Logf("Synced: %+v", c)
	}
	_, c := synced()
	require.NotNil(t, c)
	assert.Equal(t, "Reconciled", c.Reason)
	assert.True(t, srv.Running(), "the same server process healed")
}
