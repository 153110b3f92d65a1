package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/test/framework"
)

// givenShardOnTheDouble is a RootShard root and its Shard shard-1, both Available, in a
// namespace of its own, with a kcp double serving the root shard and shard-1 (whose Shard
// objects in root it returns), once the RootShard says KcpReady.
func givenShardOnTheDouble(t *testing.T, name string) (string, *framework.KcpDouble, dynamic.ResourceInterface) {
	t.Helper()
	ns := namespace(t, name)
	givenRootShard(t, ns)
	givenShard(t, ns)
	double, _ := startDoubleFor(t, ns)
	require.NoError(t, double.ServeAs(decodeSecret(t, ns, "shard-1-server", "tls.crt"), decodeSecret(t, ns, "shard-1-server", "tls.key")))
	adminDynamic, err := dynamic.NewForConfig(double.AdminConfig())
	require.NoError(t, err)
	waitFor(t, ns, "rootshard/root", operatorv1alpha1.ConditionKcpReady)
	return ns, double, adminDynamic.Resource(framework.ShardGVR)
}

// TestShardDeregistrationAndKcpReady: KcpReady follows kcp (the double) going down and up;
// deleting a Shard deletes kcp's Shard object in root first, and while kcp cannot be reached
// the Shard waits in Deleting, with its workload, and says why; it finishes once kcp is back.
func TestShardDeregistrationAndKcpReady(t *testing.T) {
	parallel(t, alone)
	ns, double, kcpShards := givenShardOnTheDouble(t, "shard-deregistration")

	// The RootShard's kcp answers; the shard is not registered in kcp yet.
	waitForReason(t, ns, "shard/shard-1", operatorv1alpha1.ConditionKcpReady, "False", "ShardNotRegistered")
	_, err := kcpShards.Create(t.Context(), shardObject("shard-1", "https://shard-1-shard-kcp."+ns+".svc.cluster.local:6443"), metav1.CreateOptions{})
	require.NoError(t, err)
	waitFor(t, ns, "shard/shard-1", operatorv1alpha1.ConditionKcpReady)

	// kcp goes down and comes back: KcpReady follows; Available stays the Deployment's.
	double.Stop()
	waitForReason(t, ns, "rootshard/root", operatorv1alpha1.ConditionKcpReady, "False", "KcpUnreachable")
	waitForReason(t, ns, "shard/shard-1", operatorv1alpha1.ConditionKcpReady, "False", "KcpUnreachable")
	assert.Equal(t, "True", kubectl(t, "get", "rootshard", "root", "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="Available")].status}`))
	require.NoError(t, double.Start(t.Context()))
	waitFor(t, ns, "rootshard/root", operatorv1alpha1.ConditionKcpReady)
	waitFor(t, ns, "shard/shard-1", operatorv1alpha1.ConditionKcpReady)

	// Deleting the Shard while kcp is down: it waits in Deleting, with its workload, and says why.
	double.Stop()
	kubectl(t, "delete", "shard", "shard-1", "-n", ns, "--wait=false")
	waitForReason(t, ns, "shard/shard-1", operatorv1alpha1.ConditionDeregistered, "False", "KcpUnreachable")
	assert.Equal(t, "Deleting", kubectl(t, "get", "shard", "shard-1", "-n", ns, "-o", "jsonpath={.status.phase}"))
	kubectl(t, "get", "deployment", "shard-1-shard-kcp", "-n", ns)
	events := kubectl(t, "get", "events", "-n", ns, "--field-selector", "involvedObject.kind=Shard,involvedObject.name=shard-1", "-o", "jsonpath={.items[*].reason}")
	assert.Contains(t, events, "KcpUnreachable")

	// kcp is back: the Shard object in root goes first, then the workload, then the Shard.
	require.NoError(t, double.Start(t.Context()))
	kubectl(t, "wait", "-n", ns, "--for=delete", "shard/shard-1", "--timeout=3m")
	_, err = kcpShards.Get(t.Context(), "shard-1", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "kcp's Shard object is deleted: %v", err)
	_, err = stack.Kubectl(t.Context(), "get", "deployment", "shard-1-shard-kcp", "-n", ns)
	assert.Error(t, err, "the Shard's Deployment is deleted")
}

// waitForReason waits until object's condition has status and reason, or one of reasons.
func waitForReason(t *testing.T, ns, object, condition, status, reason string, reasons ...string) {
	t.Helper()
	waitForReasonOn(t, stack, ns, object, condition, status, reason, reasons...)
}

// waitForReasonOn is waitForReason on the stack s.
func waitForReasonOn(t *testing.T, s *framework.Stack, ns, object, condition, status, reason string, reasons ...string) {
	t.Helper()
	var out string
	require.Eventually(t, func() bool {
		out, _ = s.Kubectl(t.Context(), "get", object, "-n", ns, "-o",
			`jsonpath={.status.conditions[?(@.type=="`+condition+`")].status}/{.status.conditions[?(@.type=="`+condition+`")].reason}`)
		for _, r := range append(reasons, reason) {
			if out == status+"/"+r {
				return true
			}
		}
		return false
	}, 2*time.Minute, 500*time.Millisecond, "%s %s=%s (%s), last %q", object, condition, status, append(reasons, reason), out)
}
