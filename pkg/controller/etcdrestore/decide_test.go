package etcdrestore

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/etcdbackup"
)

func TestDecide(t *testing.T) {
	restored := &metav1.Condition{Type: operatorv1alpha1.ConditionEtcdRestored, Status: metav1.ConditionTrue,
		Reason: operatorv1alpha1.ReasonRestored, Message: "every member started from snapshot root-a"}
	for _, tc := range []struct {
		name     string
		state    State
		restore  bool
		snapshot string
		hold     bool
		check    bool
		status   metav1.ConditionStatus
		reason   string
	}{
		{name: "no StatefulSet, not checked yet: hold and check",
			state: State{Snapshot: "root-a"}, hold: true, check: true, status: metav1.ConditionFalse, reason: operatorv1alpha1.ReasonRestoreVerifying},
		{name: "no StatefulSet, snapshot passed: create it restoring the snapshot",
			state: State{Snapshot: "root-a", Check: Check{Done: true}}, restore: true, snapshot: "root-a", status: metav1.ConditionFalse, reason: operatorv1alpha1.ReasonRestoring},
		{name: "no StatefulSet, snapshot corrupt: nothing starts",
			state: State{Snapshot: "root-a", Check: Check{Done: true, Err: fmt.Errorf("snapshot root-a: %w", etcdbackup.ErrCorrupt)}},
			hold:  true, status: metav1.ConditionFalse, reason: operatorv1alpha1.ReasonSnapshotCorrupt},
		{name: "no StatefulSet, no such snapshot: nothing starts",
			state: State{Snapshot: "root-a", Check: Check{Done: true, Err: fmt.Errorf("snapshot root-a: %w", etcdbackup.ErrNotFound)}},
			hold:  true, status: metav1.ConditionFalse, reason: operatorv1alpha1.ReasonSnapshotNotFound},
		{name: "no StatefulSet, the agent did not answer: hold and check again",
			state: State{Snapshot: "root-a", Check: Check{Done: true, Err: errors.New("connection refused")}},
			hold:  true, check: true, status: metav1.ConditionFalse, reason: operatorv1alpha1.ReasonRestoreSourceUnavailable},
		{name: "no StatefulSet, the source setup cannot serve its store: nothing starts, nothing is checked",
			state: State{Snapshot: "source-a", SourceErr: errors.New(`RootShard "source" has no spec.etcd.managed.backup`)},
			hold:  true, status: metav1.ConditionFalse, reason: operatorv1alpha1.ReasonRestoreSourceUnavailable},
		{name: "restoring from a source that went away since: the template keeps the restore it was created with",
			state:   State{Snapshot: "source-a", Exists: true, Restoring: true, RestoringSnapshot: "source-a", SourceErr: errors.New("gone")},
			restore: true, snapshot: "source-a", status: metav1.ConditionFalse, reason: operatorv1alpha1.ReasonRestoring},
		{name: "restoring, members not ready: the template keeps the snapshot it was created with",
			state:   State{Snapshot: "root-b", Exists: true, Restoring: true, RestoringSnapshot: "root-a"},
			restore: true, snapshot: "root-a", status: metav1.ConditionFalse, reason: operatorv1alpha1.ReasonRestoring},
		{name: "restoring, every member ready: the init container goes, Restored",
			state:  State{Snapshot: "root-a", Exists: true, Restoring: true, RestoringSnapshot: "root-a", Ready: true},
			status: metav1.ConditionTrue, reason: operatorv1alpha1.ReasonRestored},
		{name: "restored before: it stays so",
			state:  State{Snapshot: "root-a", Exists: true, Ready: true, Previous: restored},
			status: metav1.ConditionTrue, reason: operatorv1alpha1.ReasonRestored},
		{name: "rolled without the init container, the status read before Restored was written: Restored",
			state: State{Snapshot: "root-a", Exists: true, Ready: true, Previous: &metav1.Condition{Type: operatorv1alpha1.ConditionEtcdRestored,
				Status: metav1.ConditionFalse, Reason: operatorv1alpha1.ReasonRestoring}},
			status: metav1.ConditionTrue, reason: operatorv1alpha1.ReasonRestored},
		{name: "a StatefulSet that existed before the restore was asked: its data stays",
			state:  State{Snapshot: "root-a", Exists: true, Ready: true},
			status: metav1.ConditionFalse, reason: operatorv1alpha1.ReasonRestoreNotApplied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.state)
			assert.Equal(t, tc.restore, d.Restore, "restore")
			assert.Equal(t, tc.snapshot, d.Snapshot, "snapshot")
			assert.Equal(t, tc.hold, d.Hold, "hold")
			assert.Equal(t, tc.check, d.CheckNeeded, "check")
			assert.Equal(t, tc.status, d.Status)
			assert.Equal(t, tc.reason, d.Reason)
			assert.NotEmpty(t, d.Message)
			assert.False(t, d.Restore && d.Hold, "never both")
		})
	}
}
