package rootshard

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/kcpversion"
	"github.com/kcp-setups/apiserver/pkg/upgrade"
)

// The maintenance window (docs/kcp-versions.md, "The maintenance window"): status says when
// the next window opens and what it will apply; inside it, a setup with autoUpdate Patch is
// moved to the newest patch of its minor that the server knows, by writing spec.version, and
// the ordered roll follows as after a user's change.

const (
	// ReasonMaintenanceUpdate is the Event of a RootShard whose spec.version the server moved
	// inside its maintenance window.
	ReasonMaintenanceUpdate = "MaintenanceUpdate"
	// MaintenanceFieldManager is the field manager of the server's writes of spec.version.
	MaintenanceFieldManager = "kcp-setups-maintenance"
)

// maintain sets status.version.nextWindowStart and nextWindowVersion of a RootShard with a
// maintenance window (and clears them without one), leaving the rest of status.version to
// the roll; inside the window, with autoUpdate Patch and no roll under way, it writes the
// newest patch into spec.version. It has the RootShard reconciled again when the next window
// opens. A window that closed while the server was down is not made up for. rs is the
// RootShard as stored (not as its builders see it), since spec.version is written back.
func (c *Controller) maintain(ctx context.Context, rs *operatorv1alpha1.RootShard, status *operatorv1alpha1.RootShardStatus) error {
	m := rs.Spec.Maintenance
	if m == nil {
		if v := status.Version; v != nil {
			v.NextWindowStart, v.NextWindowVersion = nil, ""
			if apiequality.Semantic.DeepEqual(*v, operatorv1alpha1.SetupVersion{}) {
				status.Version = nil
			}
		}
		return nil
	}
	w, err := upgrade.NewWindow(m.Window)
	if err != nil {
		// Validation refuses such a window; one stored before it did waits for a fix.
		klog.FromContext(ctx).Info("The maintenance window of a RootShard cannot be read", "rootShard", klog.KObj(rs), "err", err)
		return nil
	}
	now := c.clock()
	_, open, next := w.At(now)
	if status.Version == nil {
		status.Version = &operatorv1alpha1.SetupVersion{}
	}
	v := status.Version
	start := metav1.NewTime(next.Start.UTC())
	v.NextWindowStart = &start
	v.NextWindowVersion = ""
	newest, ok := newestPatch(rs)
	if ok && m.AutoUpdate == operatorv1alpha1.AutoUpdatePatch {
		v.NextWindowVersion = newest.String()
	}
	if c.Loop != nil {
		c.Loop.Queue.AddAfter(rs.Namespace+"/"+rs.Name, next.Start.Sub(now))
	}
	if !open || !ok || m.AutoUpdate != operatorv1alpha1.AutoUpdatePatch || v.Group != "" || v.Target != rs.Spec.Version {
		return nil
	}
	// Inside the window, the roll at rest: move the setup. The update fails with a conflict
	// when the RootShard changed since the cache read it: routine, it is tried again without
	// a failure's report, once the status is written.
	moved := rs.DeepCopy()
	moved.Spec.Version = newest.String()
	if _, err := c.Ours.OperatorV1alpha1().RootShards(rs.Namespace).Update(ctx, moved, metav1.UpdateOptions{FieldManager: MaintenanceFieldManager}); err != nil {
		if apierrors.IsConflict(err) {
			return controller.RetryAfterStatus(err)
		}
		return err
	}
	c.Recorder.Event(rs, corev1.EventTypeNormal, ReasonMaintenanceUpdate, fmt.Sprintf(
		"Moved spec.version from %s to %s inside the maintenance window (autoUpdate Patch)", rs.Spec.Version, newest))
	klog.FromContext(ctx).Info("A maintenance window moved a setup to a newer patch", "rootShard", klog.KObj(rs), "from", rs.Spec.Version, "to", newest)
	return nil
}

// newestPatch is the newest release of the minor of rs's spec.version, when it is newer.
func newestPatch(rs *operatorv1alpha1.RootShard) (kcpversion.Version, bool) {
	v, ok := kcpversion.Known(rs.Spec.Version)
	if !ok {
		return kcpversion.Version{}, false
	}
	newest := kcpversion.NewestPatch(v)
	return newest, !newest.Equal(v)
}
