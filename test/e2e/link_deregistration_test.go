package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/kcphealth"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/test/framework"
)

// TestLinkedShardDeregistersThroughTheHome: a Shard of a second cluster, joined over a Link,
// reports its base URL; the home marks kcp's Shard of its name with its UID once it routes
// there, and deleting the Shard in the second cluster deletes kcp's Shard at home through the
// link. kcp's Shard of that name that carries another mark, or routes to another base URL,
// is left in place, and the remote says why.
func TestLinkedShardDeregistersThroughTheHome(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "xlinkdereg-home")
	givenRootShard(t, ns, withSpec("  shardBaseURL: "+rootShardBaseURL+"\n"))
	double, _ := startDoubleFor(t, ns)
	adminDynamic, err := dynamic.NewForConfig(double.AdminConfig())
	require.NoError(t, err)
	kcpShards := adminDynamic.Resource(framework.ShardGVR)
	waitFor(t, ns, "rootshard/root", operatorv1alpha1.ConditionKcpReady)

	const remote = "xlinkdereg-remote"
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, crossClusterLink("dereg", "dereg.links.example.com", remote)))
	waitFor(t, ns, "link/dereg", "Ready")
	second := startSecondCluster(t)
	kubectlOn(t, second, "create", "namespace", remote)
	copyReference(t, stack, ns, linkpki.BootstrapName("dereg"), second, remote)
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := second.Kubectl(context.Background(), "get", "shard,events", "-n", remote, "-o",
				`jsonpath={range .items[*]}{.kind} {.metadata.name} {.reason} {.message} {range .status.conditions[*]}{.type}={.status} {.reason} {.message}; {end}{"\n"}{end}`)
			t.Logf("the second cluster's linked Shards and Events:\n%s", out)
			t.Logf("the home's Link: %s", kubectl(t, "get", "link", "dereg", "-n", ns, "-o", "jsonpath={.status}"))
		}
	})
	baseURL := "https://shard-1-shard-kcp." + remote + ".svc.cluster.local:6443"

	// linked makes the linked Shard shard-1, waits until the home lists it by its UID with
	// its base URL, and returns the UID.
	linked := func() string {
		kubectlOn(t, second, "apply", "-n", remote, "-f", writeManifest(t, linkedShardManifest("shard-1", linkpki.BootstrapName("dereg"))))
		waitForOn(t, second, remote, "shard/shard-1", "Available")
		uid := kubectlOn(t, second, "get", "shard", "shard-1", "-n", remote, "-o", "jsonpath={.metadata.uid}")
		require.NotEmpty(t, uid)
		var listed string
		require.Eventually(t, func() bool {
			listed = kubectl(t, "get", "link", "dereg", "-n", ns, "-o",
				`jsonpath={range .status.consumers[?(@.name=="shard-1")]}{.uid} {.kcpShard} {.baseURL}{end}`)
			return listed == uid+" shard-1 "+baseURL
		}, 3*time.Minute, 2*time.Second, "the home lists the linked Shard with its base URL: %q", listed)
		return uid
	}
	// deleted deletes the linked Shard uid in the second cluster, and waits for an Event of it
	// that says want.
	deleted := func(uid, want string) {
		kubectlOn(t, second, "delete", "shard", "shard-1", "-n", remote, "--timeout=3m")
		var events string
		if !assert.Eventually(t, func() bool {
			events = kubectlOn(t, second, "get", "events", "-n", remote, "--field-selector", "involvedObject.uid="+uid,
				"-o", `jsonpath={range .items[*]}{.reason}: {.message}{"\n"}{end}`)
			return strings.Contains(events, want)
		}, time.Minute, 2*time.Second, "the remote says %q", want) {
			t.Logf("the Events of the linked Shard %s:\n%s", uid, events)
		}
	}
	markOf := func() string {
		got, err := kcpShards.Get(t.Context(), "shard-1", metav1.GetOptions{})
		require.NoError(t, err)
		return got.GetAnnotations()[kcphealth.AnnotationShardUID]
	}

	// Registered at its base URL: the home marks kcp's Shard with the linked Shard's UID.
	uid := linked()
	_, err = kcpShards.Create(t.Context(), shardObject("shard-1", baseURL), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return markOf() == uid }, 3*time.Minute, 2*time.Second,
		"the home marks kcp's Shard with the linked Shard's UID at its next report")

	// Another mark: left in place.
	got, err := kcpShards.Get(t.Context(), "shard-1", metav1.GetOptions{})
	require.NoError(t, err)
	got.SetAnnotations(map[string]string{kcphealth.AnnotationShardUID: "another-shards-uid"})
	_, err = kcpShards.Update(t.Context(), got, metav1.UpdateOptions{})
	require.NoError(t, err)
	deleted(uid, "(NotMarked)")
	assert.Equal(t, "another-shards-uid", markOf(), "kcp's Shard of another mark stays")

	// Its mark, another base URL: left in place.
	require.NoError(t, kcpShards.Delete(t.Context(), "shard-1", metav1.DeleteOptions{}))
	uid = linked()
	elsewhere := shardObject("shard-1", "https://elsewhere.example.com:6443")
	elsewhere.SetAnnotations(map[string]string{kcphealth.AnnotationShardUID: uid})
	_, err = kcpShards.Create(t.Context(), elsewhere, metav1.CreateOptions{})
	require.NoError(t, err)
	deleted(uid, "(BaseURLMismatch)")
	assert.Equal(t, uid, markOf(), "kcp's Shard routing elsewhere stays")

	// Its own registration goes with it.
	require.NoError(t, kcpShards.Delete(t.Context(), "shard-1", metav1.DeleteOptions{}))
	uid = linked()
	_, err = kcpShards.Create(t.Context(), shardObject("shard-1", baseURL), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return markOf() == uid }, 3*time.Minute, 2*time.Second, "marked with the new Shard's UID")
	deleted(uid, "Deregistered: kcp's Shard \"shard-1\" is not in the home's root workspace any more")
	_, err = kcpShards.Get(t.Context(), "shard-1", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "kcp's Shard of the linked Shard is deleted at home: %v", err)
	assert.True(t, strings.Contains(kubectl(t, "get", "events", "-n", ns, "--field-selector", "involvedObject.kind=Link,involvedObject.name=dereg",
		"-o", "jsonpath={.items[*].reason}"), "Deregistered"), "the home says so on the Link")
}
