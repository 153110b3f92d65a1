package rootshard

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
)

// The window of these tests: Saturdays 23:00 UTC for 3h. 2026-11-28 is a Saturday.
var (
	insideTheWindow  = time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	outsideTheWindow = time.Date(2026, 11, 29, 2, 30, 0, 0, time.UTC)
	nextWindowStart  = time.Date(2026, 12, 5, 23, 0, 0, 0, time.UTC)
)

func maintainedRootShard(version string, policy operatorv1alpha1.AutoUpdatePolicy, status *operatorv1alpha1.SetupVersion) *operatorv1alpha1.RootShard {
	rs := testRootShard()
	rs.Spec.Version = version
	rs.Spec.Maintenance = &operatorv1alpha1.Maintenance{AutoUpdate: policy, Window: operatorv1alpha1.MaintenanceWindow{
		Days: []string{"Saturday"}, Start: "23:00", Duration: metav1.Duration{Duration: 3 * time.Hour}}}
	rs.Status.Version = status
	return rs
}

func atRest(release string) *operatorv1alpha1.SetupVersion {
	return &operatorv1alpha1.SetupVersion{Current: release, Target: release,
		Components: []operatorv1alpha1.ComponentVersion{{Kind: "RootShard", Name: "root", Desired: release, Running: release}}}
}

// TestMaintenanceWindow: with a fake clock, the window moves spec.version to the newest patch
// of its minor only inside the window, with autoUpdate Patch, and while no roll is under way;
// status says when the next window opens and what it will apply, and keeps the rest of
// status.version.
func TestMaintenanceWindow(t *testing.T) {
	rolling := &operatorv1alpha1.SetupVersion{Current: "v0.31.4", Target: "v0.31.4", Group: operatorv1alpha1.UpgradeGroupShard}
	for name, tc := range map[string]struct {
		rs          *operatorv1alpha1.RootShard
		now         time.Time
		moved       string
		nextVersion string
	}{
		"inside the window: moved to the newest patch": {
			rs: maintainedRootShard("v0.31.4", operatorv1alpha1.AutoUpdatePatch, atRest("v0.31.4")), now: insideTheWindow,
			moved: "v0.31.6", nextVersion: "v0.31.6",
		},
		"outside the window: nothing moves": {
			rs: maintainedRootShard("v0.31.4", operatorv1alpha1.AutoUpdatePatch, atRest("v0.31.4")), now: outsideTheWindow,
			nextVersion: "v0.31.6",
		},
		"a roll under way: nothing moves": {
			rs: maintainedRootShard("v0.31.4", operatorv1alpha1.AutoUpdatePatch, rolling), now: insideTheWindow,
			nextVersion: "v0.31.6",
		},
		"a change of spec.version the roll has not seen yet: nothing moves": {
			rs: maintainedRootShard("v0.31.4", operatorv1alpha1.AutoUpdatePatch, atRest("v0.31.3")), now: insideTheWindow,
			nextVersion: "v0.31.6",
		},
		"no status.version yet: nothing moves": {
			rs: maintainedRootShard("v0.31.4", operatorv1alpha1.AutoUpdatePatch, nil), now: insideTheWindow,
			nextVersion: "v0.31.6",
		},
		"autoUpdate None: nothing moves, nothing to apply": {
			rs: maintainedRootShard("v0.31.4", operatorv1alpha1.AutoUpdateNone, atRest("v0.31.4")), now: insideTheWindow,
		},
		"the newest patch already: nothing to apply": {
			rs: maintainedRootShard("v0.32.3", operatorv1alpha1.AutoUpdatePatch, atRest("v0.32.3")), now: insideTheWindow,
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, tc.rs)
			f.c.now = func() time.Time { return tc.now }
			status := *tc.rs.Status.DeepCopy()
			require.NoError(t, f.c.maintain(t.Context(), tc.rs, &status))

			require.NotNil(t, status.Version)
			require.NotNil(t, status.Version.NextWindowStart)
			assert.True(t, status.Version.NextWindowStart.Time.Equal(nextWindowStart), "next window %v", status.Version.NextWindowStart)
			assert.Equal(t, tc.nextVersion, status.Version.NextWindowVersion)
			if tc.rs.Status.Version != nil {
				kept := *status.Version
				kept.NextWindowStart, kept.NextWindowVersion = nil, ""
				assert.Equal(t, *tc.rs.Status.Version, kept, "the rest of status.version is the roll's")
			}

			stored := f.Stored(t, "team-a", "root")
			if tc.moved == "" {
				assert.Empty(t, f.Writes())
				assert.Equal(t, tc.rs.Spec.Version, stored.Spec.Version)
				assert.Empty(t, f.Events.Events)
				return
			}
			assert.Equal(t, []string{"update rootshards/"}, f.Writes())
			assert.Equal(t, tc.moved, stored.Spec.Version)
			require.Len(t, f.Events.Events, 1)
			assert.Equal(t, "Normal MaintenanceUpdate Moved spec.version from v0.31.4 to v0.31.6 inside the maintenance window (autoUpdate Patch)", <-f.Events.Events)
		})
	}
}

// TestMaintenanceStatusIsWrittenByReconcile: the RootShard's reconcile sets the window's
// status beside the roll's, and a RootShard without a window has none of it.
func TestMaintenanceStatusIsWrittenByReconcile(t *testing.T) {
	f := newFixture(t, maintainedRootShard("v0.31.4", operatorv1alpha1.AutoUpdatePatch, nil))
	f.c.now = func() time.Time { return outsideTheWindow }
	f.converge(t)
	rs, err := kinds.RootShard.Lister(f.c.Indexes, "team-a").Get("root")
	require.NoError(t, err)
	require.NotNil(t, rs.Status.Version)
	assert.True(t, rs.Status.Version.NextWindowStart.Time.Equal(nextWindowStart))
	assert.Equal(t, "v0.31.6", rs.Status.Version.NextWindowVersion)

	// The window removed: its status goes, the roll's stays.
	rs = rs.DeepCopy()
	rs.Spec.Maintenance = nil
	status := *rs.Status.DeepCopy()
	require.NoError(t, f.c.maintain(t.Context(), rs, &status))
	require.NotNil(t, status.Version)
	assert.Nil(t, status.Version.NextWindowStart)
	assert.Empty(t, status.Version.NextWindowVersion)
	assert.Equal(t, "v0.31.4", status.Version.Target)

	// A status.version that held the window's alone goes with it.
	status.Version = &operatorv1alpha1.SetupVersion{NextWindowStart: &metav1.Time{Time: nextWindowStart}, NextWindowVersion: "v0.31.6"}
	require.NoError(t, f.c.maintain(t.Context(), rs, &status))
	assert.Nil(t, status.Version)
}

// TestMaintenanceUpdateConflict: a RootShard changed since the cache read it is moved on the
// next try, without a failure's report: the status is written and the key tried again.
func TestMaintenanceUpdateConflict(t *testing.T) {
	rs := maintainedRootShard("v0.31.4", operatorv1alpha1.AutoUpdatePatch, atRest("v0.31.4"))
	f := newFixture(t, rs)
	f.c.now = func() time.Time { return insideTheWindow }
	f.Ours.PrependReactor("update", "rootshards", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(operatorv1alpha1.Resource("rootshards"), "root", errors.New("the object has been modified"))
	})
	status := *rs.Status.DeepCopy()
	err := f.c.maintain(t.Context(), rs, &status)
	require.True(t, apierrors.IsConflict(err), "a conflict: %v", err)
	assert.Equal(t, err, controller.RetryAfterStatus(errors.Unwrap(err)), "retried after the status is written")
	assert.Empty(t, f.Events.Events)
}
