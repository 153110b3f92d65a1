package manager

import (
	"testing"

	"github.com/stretchr/testify/assert"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// TestAtRelease: a member is planned at the setup's release unless it pins a tag
// (upgrade.Tag's first rule); its repository stays.
func TestAtRelease(t *testing.T) {
	for _, tc := range []struct {
		name    string
		image   *operatorv1alpha1.ImageSpec
		release string
		want    *operatorv1alpha1.ImageSpec
	}{
		{"no image", nil, "v0.32.2", &operatorv1alpha1.ImageSpec{Tag: "v0.32.2"}},
		{"a repository alone", &operatorv1alpha1.ImageSpec{Repository: "r"}, "v0.32.2", &operatorv1alpha1.ImageSpec{Repository: "r", Tag: "v0.32.2"}},
		{"pinned", &operatorv1alpha1.ImageSpec{Tag: "v0.31.6"}, "v0.32.2", &operatorv1alpha1.ImageSpec{Tag: "v0.31.6"}},
		{"no release change", nil, "", nil},
	} {
		spec := operatorv1alpha1.ComponentSpec{Image: tc.image}
		atRelease(&spec, tc.release)
		assert.Equal(t, tc.want, spec.Image, tc.name)
	}
	assert.Equal(t, "CacheServer → RootShard → Shard → VirtualWorkspace → FrontProxy", groups())
}

// TestWithReleaseCopies: the stored object a member is planned from is not changed.
func TestWithReleaseCopies(t *testing.T) {
	s := &operatorv1alpha1.Shard{}
	c := withRelease(s, func(o *operatorv1alpha1.Shard) { atRelease(&o.Spec.ComponentSpec, "v0.32.2") })
	assert.Nil(t, s.Spec.Image)
	assert.Equal(t, "v0.32.2", c.Spec.Image.Tag)
}
