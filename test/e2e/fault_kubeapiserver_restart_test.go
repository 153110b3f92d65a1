package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kcp-setups/apiserver/test/framework"
)

// ownedResources are the host resources the controllers write, and whether another
// controller writes their status too (so that their resourceVersion moves without us).
var ownedResources = []struct {
	gvr          schema.GroupVersionResource
	statusByPeer bool
}{
	{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, true},
	{schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}, true},
	{schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}, true},
	{schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "issuers"}, true},
	{schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, false},
	{schema.GroupVersionResource{Version: "v1", Resource: "services"}, false},
	{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, false},
}

// owned is what tells that an object was written: its generation, the time of the
// controllers' last apply to it, and its resourceVersion where nobody else writes it.
type owned struct {
	Generation      int64
	AppliedAt       string
	ResourceVersion string
}

// ownedObjects are the host objects in ns that selector selects, by resource/name.
func ownedObjects(t *testing.T, ns, selector string) map[string]owned {
	t.Helper()
	out := map[string]owned{}
	for _, r := range ownedResources {
		list, err := stackOf(t).Dynamic.Resource(r.gvr).Namespace(ns).List(t.Context(), metav1.ListOptions{LabelSelector: selector})
		require.NoError(t, err)
		for _, o := range list.Items {
			state := owned{Generation: o.GetGeneration()}
			for _, f := range o.GetManagedFields() {
				if f.Manager == "kcp-setups" && f.Operation == metav1.ManagedFieldsOperationApply && f.Time != nil {
					state.AppliedAt = f.Time.UTC().Format(time.RFC3339)
				}
			}
			if !r.statusByPeer {
				state.ResourceVersion = o.GetResourceVersion()
			}
			out[r.gvr.Resource+"/"+o.GetName()] = state
		}
	}
	return out
}

// leaseHolder is the identity that holds the controller Lease of the server of the stack s.
func leaseHolder(ctx context.Context, s *framework.Stack) string {
	lease, err := s.Kube.CoordinationV1().Leases("kube-system").Get(ctx, "kcp-setups-controllers", metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

// TestKubeAPIServerRestart restarts kube-apiserver under a realized setup. The APIService
// comes back Available; the server's process survives and keeps or regains the Lease; the
// controllers resume, realizing what changes afterwards; and nothing they had written is
// written again.
func TestKubeAPIServerRestart(t *testing.T) {
	s := onFaultStack(t)
	ctx := t.Context()
	ns := namespace(t, "apiserver-restart")
	givenRootShard(t, ns)
	require.Equal(t, "Running", kubectl(t, "get", "rootshard", "root", "-n", ns, "-o", "jsonpath={.status.phase}"))

	// cert-manager may issue a CA twice under load (its trigger reads a stale Secret
	// cache), which rightly rolls the leaves and the pods once more. The test is about the
	// restart, so it takes its snapshot once the setup has settled, and accounts for a
	// second rollout only where cert-manager issued something twice.
	settledReconciles(t, ns)
	generation := deploymentGeneration(t, ns, "root-kcp")
	assertAppliedOnce(t, ns, map[string]int64{"deployment root-kcp": generation})

	pid, holder := s.ServerPID(), leaseHolder(ctx, s)
	require.NotZero(t, pid)
	require.NotEmpty(t, holder)
	selector := "operator.kcp.io/rootshard=root"
	before := ownedObjects(t, ns, selector)
	for _, want := range []string{"deployments/root-kcp", "services/root-kcp", "certificates/root-server", "secrets/root-server"} {
		require.Contains(t, before, want)
	}
	replicaSets := func() []string {
		// The root shard's, not its internal front proxy's.
		return nonEmptyLines(kubectl(t, "get", "replicasets", "-n", ns, "-l", selector+",app.kubernetes.io/component=kcp", "-o", "name"))
	}
	rsBefore := replicaSets()
	require.Len(t, rsBefore, int(generation), "one ReplicaSet per template the Deployment had")

	require.NoError(t, s.RestartKubeAPIServer(ctx))
	require.NoError(t, s.WaitForServer(ctx), "the APIService is Available again")
	assert.Equal(t, pid, s.ServerPID(), "the server's process survived: it was not restarted")

	// The controllers resume: a Shard created now is realized.
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, shardManifest))
	waitFor(t, ns, "shard/shard-1", "Available")
	assert.Eventually(t, func() bool { return leaseHolder(ctx, s) == holder }, time.Minute, time.Second,
		"the same process holds the Lease, kept or regained")
	log := s.ServerLog()
	t.Logf("the server lost the Lease during the restart: %v", strings.Contains(log, "Not leading: the controllers are stopped"))

	// Nothing the controllers had written was written again.
	after := ownedObjects(t, ns, selector)
	assert.Equal(t, before, after, "the RootShard's objects were not applied again")
	assert.Equal(t, rsBefore, replicaSets(), "the pods did not roll")
	assert.Equal(t, generation, deploymentGeneration(t, ns, "root-kcp"))

	// A change after the restart is realized, once.
	kubectl(t, "patch", "rootshard", "root", "-n", ns, "--type=merge", "-p", `{"spec":{"extraArgs":["--v=3"]}}`)
	require.Eventually(t, func() bool {
		out, _ := s.Kubectl(ctx, "get", "deployment", "root-kcp", "-n", ns, "-o", "jsonpath={.spec.template.spec.containers[0].args}")
		return strings.Contains(out, `"--v=3"`)
	}, time.Minute, time.Second, "the Deployment follows spec.extraArgs")
	waitFor(t, ns, "rootshard/root", "Available")
	assert.Equal(t, generation+1, deploymentGeneration(t, ns, "root-kcp"), "applied once")
	changed := ownedObjects(t, ns, selector)
	for key, state := range before {
		if key != "deployments/root-kcp" {
			assert.Equal(t, state, changed[key], "%s is untouched by a change of the Deployment alone", key)
		}
	}
}

// deploymentGeneration is the Deployment's metadata.generation.
func deploymentGeneration(t *testing.T, ns, name string) int64 {
	t.Helper()
	d, err := stackOf(t).Kube.AppsV1().Deployments(ns).Get(t.Context(), name, metav1.GetOptions{})
	require.NoError(t, err)
	return d.Generation
}
