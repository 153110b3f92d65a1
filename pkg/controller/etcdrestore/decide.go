// Package etcdrestore decides how a managed etcd restores from a snapshot
// (spec.etcd.managed.restore; docs/etcd.md, "Backups and restore"): the snapshot is checked
// in its store, off the workers, before the StatefulSet is created from it; the members
// restore it into their empty data directories (the restore init container) before etcd
// starts; once every member is ready, the init container goes (one roll) and EtcdRestored
// turns True. A StatefulSet that exists already keeps its members' data: a restore applies
// only when the StatefulSet is created.
package etcdrestore

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/etcdbackup"
)

// Check is where the check of a snapshot in its store stands.
type Check struct {
	// Done says the check answered; Err is its failure, nil when the snapshot passed.
	Done bool
	Err  error
}

// State is what the decision reads.
type State struct {
	// Snapshot is the snapshot spec.etcd.managed.restore names.
	Snapshot string
	// Exists says the StatefulSet exists; Restoring and RestoringSnapshot say whether its
	// template has the restore init container, and of which snapshot.
	Exists            bool
	Restoring         bool
	RestoringSnapshot string
	// Ready says every member of the StatefulSet is ready and rolled out.
	Ready bool
	// SourceErr says why the setup restore.from names cannot serve its store (it does not
	// exist, has no managed etcd or no backup); nil for the own store or a source that can.
	SourceErr error
	// Check is the snapshot's check, asked for only while the StatefulSet does not exist.
	Check Check
	// Previous is the EtcdRestored condition as the status has it.
	Previous *metav1.Condition
}

// Decision is what the realize does, and the condition it reports.
type Decision struct {
	// Restore keeps (or puts) the restore init container of Snapshot in the StatefulSet's
	// template.
	Restore  bool
	Snapshot string
	// Hold keeps the StatefulSet from being created.
	Hold bool
	// CheckNeeded says the snapshot's check is to be asked for.
	CheckNeeded bool
	Status      metav1.ConditionStatus
	Reason      string
	Message     string
}

// Decide is the restore's next step.
func Decide(s State) Decision {
	switch {
	case s.Exists && s.Restoring && !s.Ready:
		// Until every member started, the template keeps the snapshot it was created with,
		// whatever the spec names since.
		return Decision{Restore: true, Snapshot: s.RestoringSnapshot, Status: metav1.ConditionFalse, Reason: operatorv1alpha1.ReasonRestoring,
			Message: fmt.Sprintf("the members restore snapshot %s and start from it", s.RestoringSnapshot)}
	case s.Exists && s.Restoring:
		// Every member started from the snapshot: the init container goes, and a member whose
		// volume is lost later starts empty and joins the others rather than restoring an old
		// snapshot beside them.
		return Decision{Status: metav1.ConditionTrue, Reason: operatorv1alpha1.ReasonRestored,
			Message: fmt.Sprintf("every member started from snapshot %s", s.RestoringSnapshot)}
	case s.Exists:
		if p := s.Previous; p != nil && p.Reason == operatorv1alpha1.ReasonRestored {
			return Decision{Status: p.Status, Reason: p.Reason, Message: p.Message}
		}
		if p := s.Previous; p != nil && (p.Reason == operatorv1alpha1.ReasonRestoring || p.Reason == operatorv1alpha1.ReasonRestoreVerifying) {
			// The restore init container goes only in the roll that follows Restored (or with
			// the restore itself), so a status that still says Restoring is one read before
			// that write reached the cache: the members started from the snapshot.
			return Decision{Status: metav1.ConditionTrue, Reason: operatorv1alpha1.ReasonRestored,
				Message: fmt.Sprintf("every member started from snapshot %s", s.Snapshot)}
		}
		return Decision{Status: metav1.ConditionFalse, Reason: operatorv1alpha1.ReasonRestoreNotApplied,
			Message: fmt.Sprintf("the managed etcd's StatefulSet exists, so its members keep their data: snapshot %s is restored only when the StatefulSet is created", s.Snapshot)}
	case s.SourceErr != nil:
		return Decision{Hold: true, Status: metav1.ConditionFalse, Reason: operatorv1alpha1.ReasonRestoreSourceUnavailable,
			Message: fmt.Sprintf("nothing starts from snapshot %s: %v", s.Snapshot, s.SourceErr)}
	case !s.Check.Done:
		return Decision{Hold: true, CheckNeeded: true, Status: metav1.ConditionFalse, Reason: operatorv1alpha1.ReasonRestoreVerifying,
			Message: fmt.Sprintf("checking snapshot %s in its store before the members start from it", s.Snapshot)}
	case errors.Is(s.Check.Err, etcdbackup.ErrNotFound):
		return Decision{Hold: true, Status: metav1.ConditionFalse, Reason: operatorv1alpha1.ReasonSnapshotNotFound,
			Message: fmt.Sprintf("nothing starts: %v", s.Check.Err)}
	case errors.Is(s.Check.Err, etcdbackup.ErrCorrupt):
		return Decision{Hold: true, Status: metav1.ConditionFalse, Reason: operatorv1alpha1.ReasonSnapshotCorrupt,
			Message: fmt.Sprintf("nothing starts from snapshot %s: %v", s.Snapshot, s.Check.Err)}
	case s.Check.Err != nil:
		return Decision{Hold: true, CheckNeeded: true, Status: metav1.ConditionFalse, Reason: operatorv1alpha1.ReasonRestoreSourceUnavailable,
			Message: fmt.Sprintf("snapshot %s could not be checked, retrying: %v", s.Snapshot, s.Check.Err)}
	default:
		return Decision{Restore: true, Snapshot: s.Snapshot, Status: metav1.ConditionFalse, Reason: operatorv1alpha1.ReasonRestoring,
			Message: fmt.Sprintf("snapshot %s passed its check: the members restore it and start from it", s.Snapshot)}
	}
}
