package rootshard

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func TestVersionCell(t *testing.T) {
	rs := func(version string, v *operator.SetupVersion) *operator.RootShard {
		o := &operator.RootShard{}
		o.Spec.Version, o.Status.Version = version, v
		return o
	}
	for name, tc := range map[string]struct {
		rs   *operator.RootShard
		want string
	}{
		"no spec.version":              {rs("", &operator.SetupVersion{Current: "v0.31.6", Target: "v0.31.6"}), ""},
		"no status yet: spec.version":  {rs("v0.32.3", nil), "v0.32.3"},
		"up to date: current":          {rs("v0.32.3", &operator.SetupVersion{Current: "v0.32.3", Target: "v0.32.3"}), "v0.32.3"},
		"rolling: current→target":      {rs("v0.32.3", &operator.SetupVersion{Current: "v0.31.6", Target: "v0.32.3", Group: "Shard"}), "v0.31.6→v0.32.3"},
		"window fields alone: version": {rs("v0.32.3", &operator.SetupVersion{NextWindowVersion: "v0.32.4"}), "v0.32.3"},
	} {
		t.Run(name, func(t *testing.T) { assert.Equal(t, tc.want, VersionCell(tc.rs)) })
	}
}

// TestTheRollIsTheServers: status.version is the server's to write (store.ServerWritten), and
// any change of it counts, a member's desired release as much as the group.
func TestTheRollIsTheServers(t *testing.T) {
	if assert.Len(t, Kind.ServerWritten, 3) {
		w := Kind.ServerWritten[0]
		assert.Equal(t, "status.version", w.Path.String())
		assert.Contains(t, w.Why, "the state of the setup's roll")
		base := &operator.RootShard{}
		base.Status.Version = &operator.SetupVersion{Current: "v0.31.6", Target: "v0.32.3",
			Components: []operator.ComponentVersion{{Kind: "Shard", Name: "a", Desired: "v0.31.6"}}}
		forged := base.DeepCopy()
		forged.Status.Version.Components[0].Desired = "v0.30.0"
		assert.NotEqual(t, w.Value(base), w.Value(forged))
		assert.Equal(t, w.Value(base), w.Value(base.DeepCopy()))
		assert.Equal(t, "status.etcd", Kind.ServerWritten[1].Path.String(), "the managed etcd's state is the server's too")
		assert.Equal(t, "status.etcd.pendingSnapshot", Kind.ServerWritten[2].Path.String(), "and the snapshot asked for on demand")
		assert.Equal(t, "backup", Kind.ServerWritten[2].Subresource, "which the backup subresource writes too")
	}
}
