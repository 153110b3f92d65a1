package cacheserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/preview"
)

// TestPlanIsWhatTheReconcileWrites: the plan of a change writes nothing, says that the
// Deployment rolls to the new image, and the reconcile of the change then writes the
// Deployment the plan holds; a plan of the stored object is a no-op.
func TestPlanIsWhatTheReconcileWrites(t *testing.T) {
	f := newFixture(t, cacheServer())
	var stored *operatorv1alpha1.CacheServer
	for range 4 {
		stored = f.sync(t)
	}
	require.Equal(t, operatorv1alpha1.PhaseRunning, stored.Status.Phase)

	f.Reset()
	same, err := f.c.Plan(t.Context(), stored, nil)
	require.NoError(t, err)
	before, err := f.c.Plan(t.Context(), stored, nil)
	require.NoError(t, err)
	assert.Empty(t, preview.Diff(before, same), "the same object plans the same")
	require.Len(t, before.Deployments, 1)
	assert.True(t, before.Deployments[0].Exists)
	assert.NotEmpty(t, before.Certificates)

	changed := stored.DeepCopy()
	changed.Spec.Image = &operatorv1alpha1.ImageSpec{Tag: "v0.31.6"}
	after, err := f.c.Plan(t.Context(), changed, nil)
	require.NoError(t, err)
	assert.Empty(t, f.Writes(), "a plan writes nothing")

	changes := preview.Diff(before, after)
	require.Len(t, changes, 1, "%+v", changes)
	assert.Equal(t, preview.Rolls, changes[0].Action)
	assert.Contains(t, changes[0].Why, "→v0.31.6")

	// What the reconcile writes is what was planned.
	_, err = f.Ours.OperatorV1alpha1().CacheServers("team-a").Update(t.Context(), changed, metav1.UpdateOptions{})
	require.NoError(t, err)
	f.Stored(t, "team-a", "cache")
	f.sync(t)
	obj, exists, err := f.Host.Caches["deployments"].GetByKey("team-a/" + *after.Deployments[0].Deployment.Name)
	require.NoError(t, err)
	require.True(t, exists)
	written := obj.(*appsv1.Deployment)
	planned := after.Deployments[0].Deployment.Spec.Template.Spec.Containers
	require.Len(t, written.Spec.Template.Spec.Containers, len(planned))
	for i, c := range written.Spec.Template.Spec.Containers {
		assert.Equal(t, *planned[i].Image, c.Image)
		assert.Equal(t, planned[i].Args, c.Args)
	}
}
