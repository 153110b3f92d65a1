package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// Object is one of our kinds, as a pointer.
type Object interface {
	metav1.Object
	runtime.Object
}

// Common are the status fields every kind has.
type Common struct {
	// Phase is nil for a kind with phases of its own, which its reconcile sets: Lifecycle
	// then leaves the phase alone, and shows deletion in the Available condition only.
	Phase *operatorv1alpha1.Phase
	// OwnPhase, for such a kind, reads its phase for the objects metric.
	OwnPhase           func() string
	ObservedGeneration *int64
	Conditions         *[]metav1.Condition
}

// Lifecycle is what every kind's controller does around its reconcile: it adds its finalizer,
// writes the status only when it changed, and, once the object is being deleted, marks it
// Deleting, removes what the controllers created for it, and only that, then lets it go.
type Lifecycle[T Object, S any] struct {
	Kind[T, S]
	// Get reads an object from the informer's cache.
	Get func(namespace, name string) (T, error)
	// Update and UpdateStatus write an object and its status.
	Update       func(ctx context.Context, obj T) (T, error)
	UpdateStatus func(ctx context.Context, obj T) (T, error)
	// cleanup, when set, runs once what the object owns is deleted: for what it shares.
	cleanup func(ctx context.Context, obj T) error
	// etcdClaims and release, when set, are the controller's (EtcdOwner, Releaser).
	etcdClaims func(obj T) []string
	release    func(ctx context.Context, obj T, status *S) error

	Host     *hostcluster.Host
	Recorder record.EventRecorder
	// LinkState is Deps.LinkState: the state of a link, for LinkReady (SetLinkReady).
	LinkState LinkStateFunc
	// LinkDeregister is Deps.LinkDeregister.
	LinkDeregister LinkDeregisterFunc
}

// Sync reconciles the object of key: reconcile receives the object and a copy of its status
// with observedGeneration set, and fills in the rest; the status is written when it changed.
// When reconcile fails, only Synced=False with the failure's reason is written, a Warning
// Event says why, and the key is retried with backoff; unless it failed with
// RetryAfterStatus, which is retried too, after the status is written as after a success.
func (l Lifecycle[T, S]) Sync(ctx context.Context, key string, reconcile func(ctx context.Context, obj T, status *S) error) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil // not a key of ours; nothing will ever make it one
	}
	obj, err := l.Get(namespace, name)
	if apierrors.IsNotFound(err) {
		observedObjects.forget(l.Name, namespace, name)
		return nil
	}
	if err != nil {
		return err
	}
	takeover, over := l.takeover(obj)
	owner := hostcluster.Owner{Kind: l.Name, Name: obj.GetName(), UID: obj.GetUID(), Adopt: takeover}
	if takeover {
		owner.KcpOperatorNames = hostcluster.KcpOperatorNames(obj)
	}
	ctx = hostcluster.WithOwner(ctx, owner)
	if obj.GetDeletionTimestamp() != nil {
		return l.finalize(ctx, obj)
	}
	if !slices.Contains(obj.GetFinalizers(), l.Finalizer()) {
		// The update brings the object back through the informer.
		obj = l.copy(obj)
		obj.SetFinalizers(append(obj.GetFinalizers(), l.Finalizer()))
		_, err := l.Update(ctx, obj)
		return err
	}
	next := l.copy(obj)
	status := l.Status(next)
	*l.Common(status).ObservedGeneration = obj.GetGeneration()
	later := reconcile(ctx, obj, status)
	var retry *retryAfterStatus
	if later != nil && !errors.As(later, &retry) {
		l.ReportFailure(ctx, obj, later)
		return later
	}
	l.markSynced(obj, status)
	var leftovers error
	switch {
	case takeover && meta.IsStatusConditionTrue(*l.Common(status).Conditions, operatorv1alpha1.ConditionAvailable):
		// Everything is realized: what kcp-operator made that nothing took over goes, and the
		// takeover is over.
		leftovers = l.Host.RemoveKcpOperatorLeftovers(ctx, obj.GetNamespace(), l.Name, obj.GetName(), l.Recorder, obj)
		if leftovers == nil {
			l.SetCondition(obj, status, operatorv1alpha1.ConditionTakenOver, metav1.ConditionTrue, operatorv1alpha1.ReasonTakenOverFromKcpOperator,
				"Took over what kcp-operator made for this object; the annotation "+operatorv1alpha1.AnnotationAdopt+" has no effect any more")
		}
	case over:
		// An object with the annotation that was Available before it was recorded.
		l.SetCondition(obj, status, operatorv1alpha1.ConditionTakenOver, metav1.ConditionTrue, operatorv1alpha1.ReasonTakenOverFromKcpOperator,
			"Was Available with the annotation "+operatorv1alpha1.AnnotationAdopt+", which has no effect any more")
	}
	if _, err := l.writeStatus(ctx, obj, next); err != nil {
		return err
	}
	if leftovers != nil || retry == nil {
		return leftovers
	}
	return retry.err
}

// RetryAfterStatus is what a reconcile returns that did its part but must be tried again for
// err, a failure outside the host cluster that no event would bring back (an unreachable
// kcp): Sync writes the status as after a success, the conditions that say why included,
// and then returns err, so that the queue retries the key with backoff. It is nil when err
// is.
func RetryAfterStatus(err error) error {
	if err == nil {
		return nil
	}
	return &retryAfterStatus{err: err}
}

type retryAfterStatus struct{ err error }

func (r *retryAfterStatus) Error() string { return r.err.Error() }
func (r *retryAfterStatus) Unwrap() error { return r.err }

// takeover reports whether obj takes over what kcp-operator made (the annotation
// operator.kcp.io/adopt: kcp-operator): only during a takeover, until the object was first
// Available, which the condition TakenOver records. Once over, the annotation has no effect;
// over is true when it is over but not recorded yet (the object was Available before).
func (l Lifecycle[T, S]) takeover(obj T) (takeover, over bool) {
	if obj.GetAnnotations()[operatorv1alpha1.AnnotationAdopt] != operatorv1alpha1.AdoptKcpOperator {
		return false, false
	}
	conditions := *l.Common(l.Status(obj)).Conditions
	if meta.FindStatusCondition(conditions, operatorv1alpha1.ConditionTakenOver) != nil {
		return false, false
	}
	if meta.IsStatusConditionTrue(conditions, operatorv1alpha1.ConditionAvailable) {
		return false, true
	}
	return true, false
}

// writeStatus writes next's status when it differs from obj's, and returns the object as it
// is now. Every status write goes through here, so the objects' metrics are updated here from
// the status as it now stands.
func (l Lifecycle[T, S]) writeStatus(ctx context.Context, obj, next T) (T, error) {
	if apiequality.Semantic.DeepEqual(l.Status(obj), l.Status(next)) {
		l.recordMetrics(obj)
		return obj, nil
	}
	written, err := l.UpdateStatus(ctx, next)
	if err != nil {
		l.recordMetrics(obj)
		return written, err
	}
	l.recordMetrics(written)
	return written, nil
}

// recordMetrics sets the objects' gauges from obj's status.
func (l Lifecycle[T, S]) recordMetrics(obj T) {
	common := l.Common(l.Status(obj))
	var phase string
	switch {
	case common.Phase != nil:
		phase = string(*common.Phase)
	case common.OwnPhase != nil:
		phase = common.OwnPhase()
	}
	var conditions []metav1.Condition
	if common.Conditions != nil {
		conditions = *common.Conditions
	}
	observedObjects.record(l.Name, obj.GetNamespace(), obj.GetName(), phase, conditions)
}

// SetCondition sets a condition of status at obj's generation.
func (l Lifecycle[T, S]) SetCondition(obj T, status *S, t string, s metav1.ConditionStatus, reason, message string) {
	SetCondition(l.Common(status).Conditions, obj.GetGeneration(), t, s, reason, message)
}

// RootShardMissing sets the status of an object whose RootShard does not exist yet, and
// says so in an Event the first time. The RootShard's informer event brings it back.
func (l Lifecycle[T, S]) RootShardMissing(obj T, status *S, rootShard string) {
	msg := fmt.Sprintf("RootShard %q does not exist in namespace %q", rootShard, obj.GetNamespace())
	l.SetRootShard(obj, status, false, msg)
	l.ReferenceMissing(obj, status, operatorv1alpha1.ReasonRootShardNotFound, msg, "RootShard")
}

// SetRootShard sets kcp-operator's RootShard condition of a Shard or FrontProxy: True with
// reason Valid when its RootShard (or the copy of its join Secret) is found, else False with
// reason InvalidReference, as kcp-operator's controllers set it.
func (l Lifecycle[T, S]) SetRootShard(obj T, status *S, found bool, message string) {
	s, reason := metav1.ConditionTrue, operatorv1alpha1.ReasonRootShardValid
	if !found {
		s, reason = metav1.ConditionFalse, operatorv1alpha1.ReasonRootShardInvalidReference
	}
	l.SetCondition(obj, status, operatorv1alpha1.ConditionRootShard, s, reason, message)
}

// SetJoinedRootShard sets the RootShard condition of a Shard or FrontProxy joined through
// the copy ref of a join Secret: whether the copy is usable (err is Join's).
func (l Lifecycle[T, S]) SetJoinedRootShard(obj T, status *S, ref string, err error) {
	if err != nil {
		l.SetRootShard(obj, status, false, fmt.Sprintf("the join Secret %q is not usable: %v", ref, err))
		return
	}
	l.SetRootShard(obj, status, true, fmt.Sprintf("RootShard reference is valid: the RootShard of the join Secret %q", ref))
}

// ReferenceMissing sets the status of an object that waits for the object it refers to,
// named by what ("RootShard"), and says so in an Event the first time. The referenced
// kind's informer event brings it back.
func (l Lifecycle[T, S]) ReferenceMissing(obj T, status *S, reason, message, what string) {
	common := l.Common(status)
	SetReferenceMissing(common.Conditions, obj.GetGeneration(), reason, message, what)
	if common.Phase != nil {
		*common.Phase = operatorv1alpha1.PhaseProvisioning
	}
	if !apiequality.Semantic.DeepEqual(l.Status(obj), status) {
		l.Recorder.Event(obj, "Warning", reason, message)
	}
}

// Applied records what a reconcile wrote. Why it failed, Sync reports (ReportFailure), once
// for every kind and every failure, including those before anything was applied.
func (l Lifecycle[T, S]) Applied(obj T, wrote int, err error) {
	switch {
	case err != nil:
	case wrote == 1:
		l.Recorder.Event(obj, "Normal", "Applied", "Applied 1 object to the host cluster")
	case wrote > 1:
		l.Recorder.Eventf(obj, "Normal", "Applied", "Applied %d objects to the host cluster", wrote)
	}
}

// Observe sets CertificatesReady and Available from the host's caches, and the phase from
// them.
func (l Lifecycle[T, S]) Observe(obj T, status *S, certificates int, pending []string, deployment string) {
	common := l.Common(status)
	SetCertificatesReady(common.Conditions, obj.GetGeneration(), certificates, pending)
	available, reason, message := l.Host.DeploymentAvailable(obj.GetNamespace(), deployment)
	l.SetCondition(obj, status, operatorv1alpha1.ConditionAvailable, available, reason, message)
	if common.Phase != nil {
		*common.Phase = Phase(*common.Conditions)
	}
}

// finalize removes everything the controllers created for an object that is being deleted,
// and only that, then lets it go.
func (l Lifecycle[T, S]) finalize(ctx context.Context, obj T) error {
	if !slices.Contains(obj.GetFinalizers(), l.Finalizer()) {
		return nil
	}
	next := l.copy(obj)
	status := l.Status(next)
	common := l.Common(status)
	if common.Phase != nil {
		*common.Phase = operatorv1alpha1.PhaseDeleting
	}
	l.SetCondition(obj, status, operatorv1alpha1.ConditionAvailable, metav1.ConditionFalse, operatorv1alpha1.ReasonDeleting, "the "+l.Noun+" is being deleted")
	var released error
	if l.release != nil {
		released = l.release(ctx, obj, status)
	}
	obj, err := l.writeStatus(ctx, obj, next)
	if err != nil {
		return err
	}
	if released != nil {
		return released
	}
	// What carries this object's UID, or no UID (written before the mark): never a
	// leftover of another object of the same name, nor what another derived first.
	for _, selector := range hostcluster.OwnedSelectors(l.Name, obj.GetName(), obj.GetUID()) {
		if err := l.Host.DeleteOwned(ctx, obj.GetNamespace(), selector); err != nil {
			return err
		}
	}
	// A managed etcd's data stays unless its owner says otherwise: a setup deleted by
	// mistake loses no data. Its claims go by name and UID, never by labels, which anyone
	// who may label a claim can set.
	if l.etcdClaims != nil && obj.GetAnnotations()[operatorv1alpha1.AnnotationDeleteEtcdVolumes] == "true" {
		kept, err := l.Host.DeleteEtcdClaims(ctx, obj.GetNamespace(), l.etcdClaims(obj), obj.GetUID())
		if err != nil {
			return err
		}
		if len(kept) > 0 {
			l.Recorder.Eventf(obj, "Warning", "EtcdVolumesKept", "Kept the PersistentVolumeClaims %s: they are not marked as this %s's (label %s)",
				strings.Join(kept, ", "), l.Noun, pki.LabelOwnerUID)
		}
	}
	if l.cleanup != nil {
		if err := l.cleanup(ctx, obj); err != nil {
			return err
		}
	}
	l.Recorder.Event(obj, "Normal", "Cleaned", "Deleted what the controllers created for the "+l.Noun)
	obj = l.copy(obj)
	obj.SetFinalizers(slices.DeleteFunc(obj.GetFinalizers(), func(f string) bool { return f == l.Finalizer() }))
	_, err = l.Update(ctx, obj)
	return err
}

func (l Lifecycle[T, S]) copy(obj T) T {
	return obj.DeepCopyObject().(T)
}
