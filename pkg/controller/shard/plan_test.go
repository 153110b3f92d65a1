package shard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/preview"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// TestPlanWithAnotherRootShard: a realized Shard planned as it is changes nothing; planned
// with a changed RootShard in place of the stored one (a RootShard's preview), its
// Deployment rolls for the new flags; nothing is written either way.
func TestPlanWithAnotherRootShard(t *testing.T) {
	f := newFixture(t)
	f.addRootShard(t)
	var s *operatorv1alpha1.Shard
	for range 4 {
		s = f.sync(t)
		f.Host.CatchUp(t)
	}
	require.Len(t, f.Host.Caches["deployments"].List(), 1)
	f.Reset()

	stored, err := f.c.Plan(t.Context(), s, nil)
	require.NoError(t, err)
	again, err := f.c.Plan(t.Context(), s, nil)
	require.NoError(t, err)
	assert.Empty(t, preview.Diff(stored, again))

	rs, err := kinds.RootShard.Lister(f.c.Indexes, "team-a").Get("root")
	require.NoError(t, err)
	moved := rs.DeepCopy()
	moved.Spec.External.Hostname = "moved.example.com"
	changed, err := f.c.Plan(t.Context(), s, moved)
	require.NoError(t, err)
	changes := preview.Diff(stored, changed)
	require.NotEmpty(t, changes)
	assert.Equal(t, "Deployment", changes[0].Kind)
	assert.Equal(t, preview.Rolls, changes[0].Action)
	assert.Empty(t, f.Writes(), "a plan writes nothing")
}

// TestPlanOfAJoinedShard: a joined Shard is planned from the RootShard its copy describes,
// with its local CAs: as realized, nothing changes.
func TestPlanOfAJoinedShard(t *testing.T) {
	j := newJoinedFixture(t)
	j.Host.PutReference(t, j.in.Copies[reference.ShardJoin])
	s := j.converge(t)
	j.Reset()
	stored, err := j.c.Plan(t.Context(), s, nil)
	require.NoError(t, err)
	require.Len(t, stored.Deployments, 1)
	assert.True(t, stored.Deployments[0].Exists)
	changed := s.DeepCopy()
	changed.Spec.Image = &operatorv1alpha1.ImageSpec{Tag: "v0.31.6"}
	next, err := j.c.Plan(t.Context(), changed, nil)
	require.NoError(t, err)
	changes := preview.Diff(stored, next)
	require.NotEmpty(t, changes)
	assert.Contains(t, changes[0].Why, "→v0.31.6")
	assert.Empty(t, j.Writes(), "a plan writes nothing")
}
