package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/kcphealth"
)

// TestDeregistrationNeedsTheShardsUID plays issue 38 (9) against the kcp double: kcp's Shard
// object is deleted with a Shard only when it carries that Shard's UID. A registration of the
// Shard's name and URL marked for another Shard (a shard joined elsewhere) is not this
// Shard's: KcpReady says so, and deleting the Shard leaves it in kcp. A registration found at
// the Shard's own address unmarked is marked with its UID, and goes with it.
func TestDeregistrationNeedsTheShardsUID(t *testing.T) {
	parallel(t, alone)
	ns, double, kcpShards := givenShardOnTheDouble(t, "shard-uid")
	uid := kubectl(t, "get", "shard", "shard-1", "-n", ns, "-o", "jsonpath={.metadata.uid}")
	require.NotEmpty(t, uid)

	// Registered at this Shard's address, for another Shard.
	elsewhere := shardObject("shard-1", "https://shard-1-shard-kcp."+ns+".svc.cluster.local:6443")
	elsewhere.SetAnnotations(map[string]string{kcphealth.AnnotationShardUID: "another-shards-uid"})
	_, err := kcpShards.Create(t.Context(), elsewhere, metav1.CreateOptions{})
	require.NoError(t, err)
	var message string
	require.Eventually(t, func() bool {
		message = kubectl(t, "get", "shard", "shard-1", "-n", ns, "-o",
			`jsonpath={.status.conditions[?(@.type=="KcpReady")].status}/{.status.conditions[?(@.type=="KcpReady")].reason}: {.status.conditions[?(@.type=="KcpReady")].message}`)
		return strings.Contains(message, "registered for another Shard")
	}, 2*time.Minute, time.Second, "KcpReady says whose registration it is: %s", message)
	assert.Contains(t, message, "False/ShardNotRegistered: kcp's Shard \"shard-1\" in the root workspace was registered for another Shard (operator.kcp.io/shard-uid another-shards-uid)")

	kubectl(t, "delete", "shard", "shard-1", "-n", ns, "--timeout=3m")
	got, err := kcpShards.Get(t.Context(), "shard-1", metav1.GetOptions{})
	require.NoError(t, err, "another shard's registration stays in kcp")
	assert.Equal(t, "another-shards-uid", got.GetAnnotations()[kcphealth.AnnotationShardUID])
	events := kubectl(t, "get", "events", "-n", ns, "--field-selector", "involvedObject.kind=Shard,involvedObject.name=shard-1", "-o", "jsonpath={.items[*].message}")
	assert.Contains(t, events, `kcp's Shard "shard-1" in the root workspace carries operator.kcp.io/shard-uid another-shards-uid, not this Shard's `+uid)

	// A Shard whose own kcp registered itself, unmarked: marked with its UID, deleted with it.
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, strings.ReplaceAll(shardManifest, "shard-1", "shard-2")))
	waitFor(t, ns, "shard/shard-2", "Available")
	_, err = kcpShards.Create(t.Context(), shardObject("shard-2", "https://shard-2-shard-kcp."+ns+".svc.cluster.local:6443"), metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, double.ServeAs(decodeSecret(t, ns, "shard-2-server", "tls.crt"), decodeSecret(t, ns, "shard-2-server", "tls.key")))
	waitFor(t, ns, "shard/shard-2", operatorv1alpha1.ConditionKcpReady)
	uid2 := kubectl(t, "get", "shard", "shard-2", "-n", ns, "-o", "jsonpath={.metadata.uid}")
	require.Eventually(t, func() bool {
		got, err := kcpShards.Get(t.Context(), "shard-2", metav1.GetOptions{})
		return err == nil && got.GetAnnotations()[kcphealth.AnnotationShardUID] == uid2
	}, time.Minute, time.Second, "kcp's Shard carries the Shard's UID")
	kubectl(t, "delete", "shard", "shard-2", "-n", ns, "--timeout=3m")
	_, err = kcpShards.Get(t.Context(), "shard-2", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "its own registration goes with it: %v", err)
}
