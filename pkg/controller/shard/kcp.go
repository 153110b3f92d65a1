package shard

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kcphealth"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/kcpclient"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// deregisterTimeout bounds the deletion of kcp's Shard object: an unreachable kcp fails the
// attempt, which is retried with backoff, instead of holding a worker.
const deregisterTimeout = 10 * time.Second

// kcpReady is the KcpReady check of a Shard: its own kcp's /readyz, then its Shard object in
// the root workspace, read through its RootShard.
func (c *Controller) kcpReady(s *operatorv1alpha1.Shard, rs *operatorv1alpha1.RootShard) func(context.Context) kcphealth.Result {
	return func(ctx context.Context) kcphealth.Result {
		r := kcphealth.Readyz(ctx, func() (*rest.Config, error) { return c.Host.Kcp.Shard(s, rs, "") })
		if r.Status != metav1.ConditionTrue {
			return r
		}
		root := func() (*rest.Config, error) { return c.Host.Kcp.RootShard(rs, kcphealth.RootWorkspace) }
		return kcphealth.ShardRegistered(ctx, root, s.Name, shard.Server(s, rs).BaseURL(), string(s.UID))
	}
}

// Release deregisters the Shard being deleted (controller.Releaser): it deletes kcp's Shard
// object from the root workspace, through its RootShard, before the Shard's workloads go:
// else front proxies keep routing to a dead shard and workspaces can still be scheduled onto
// it. While
// kcp cannot be reached, the Shard stays in Deleting with Deregistered=False and is retried
// with backoff. It lets the Shard go without asking kcp when an admin says so
// (AnnotationSkipKcpCleanup), and when there is no kcp left to ask: its RootShard does not
// exist, or is being deleted and its kcp no longer answers. A Shard joined over a link asks
// its home instead (releaseLinked).
func (c *Controller) Release(ctx context.Context, s *operatorv1alpha1.Shard, status *operatorv1alpha1.ShardStatus) error {
	if l := s.Spec.RootShard.Link; l != nil {
		return c.releaseLinked(ctx, s, status, l.SecretRef.Name)
	}
	if c.Host.Kcp == nil {
		return nil
	}
	if s.Spec.RootShard.SecretRef != nil {
		// Joined by a copy: the server has no identity toward that root shard's kcp.
		c.Recorder.Eventf(s, corev1.EventTypeNormal, "DeregistrationSkipped",
			"kcp's Shard %q was not deleted from the root workspace: the Shard joined by a copy of a shard-join Secret, and the server has no identity toward that kcp; delete it there", s.Name)
		return nil
	}
	if c.Host.NoKcpDialer {
		c.Recorder.Eventf(s, corev1.EventTypeWarning, "DeregistrationSkipped",
			"kcp's Shard %q was not deleted from the root workspace: %v", s.Name, kcpclient.ErrNoDialer)
		return nil
	}
	if s.Annotations[operatorv1alpha1.AnnotationSkipKcpCleanup] == "true" {
		c.Recorder.Eventf(s, corev1.EventTypeWarning, "DeregistrationSkipped",
			"kcp's Shard %q was not deleted from the root workspace: the Shard has the annotation %s", s.Name, operatorv1alpha1.AnnotationSkipKcpCleanup)
		return nil
	}
	if terminating, err := c.Host.NamespaceTerminating(ctx, s.Namespace); err != nil {
		return err
	} else if terminating {
		c.Recorder.Eventf(s, corev1.EventTypeWarning, "DeregistrationSkipped",
			"kcp's Shard %q was not deleted: namespace %s is being deleted, and its RootShard and kcp with it", s.Name, s.Namespace)
		return nil
	}
	rs, err := kinds.RootShard.Lister(c.Indexes, s.Namespace).Get(rootShardName(s))
	if apierrors.IsNotFound(err) {
		c.Recorder.Eventf(s, corev1.EventTypeWarning, "DeregistrationSkipped",
			"kcp's Shard %q was not deleted: the RootShard %q does not exist, so there is no root workspace to delete it from", s.Name, rootShardName(s))
		return nil
	}
	if err != nil {
		return err
	}
	root := func() (*rest.Config, error) { return c.Host.Kcp.RootShard(rs, kcphealth.RootWorkspace) }
	attempt, cancel := context.WithTimeout(ctx, deregisterTimeout)
	defer cancel()
	err = kcphealth.DeleteShard(attempt, root, s.Name, string(s.UID))
	var notThis *kcphealth.NotThisShardsError
	if errors.As(err, &notThis) {
		c.Recorder.Event(s, corev1.EventTypeWarning, "DeregistrationSkipped", notThis.Error())
		c.setDeregistered(s, status, kcphealth.Result{Status: metav1.ConditionTrue, Reason: operatorv1alpha1.ReasonDeregistered,
			Message: notThis.Error()})
		return nil
	}
	if err == nil {
		c.setDeregistered(s, status, kcphealth.Result{Status: metav1.ConditionTrue, Reason: operatorv1alpha1.ReasonDeregistered,
			Message: fmt.Sprintf("kcp's Shard %q is not in the root workspace any more", s.Name)})
		return nil
	}
	failure := kcphealth.Failure(fmt.Sprintf("deleting kcp's Shard %q from the root workspace", s.Name), err)
	if rs.DeletionTimestamp != nil {
		// Its root shard's workloads and credentials are going too: waiting for them would
		// keep the Shard forever. Its Shard object goes with the root shard's etcd, or stays
		// there for a root shard made again on the same etcd to find; the Event says which
		// object, for an admin to delete.
		c.Recorder.Eventf(s, corev1.EventTypeWarning, "DeregistrationSkipped",
			"kcp's Shard %q was not deleted: the RootShard %q is being deleted, and %s", s.Name, rs.Name, failure.Message)
		return nil
	}
	failure.Message += fmt.Sprintf(" (retried with backoff; the annotation %s=true lets the Shard go without it)",
		operatorv1alpha1.AnnotationSkipKcpCleanup)
	c.setDeregistered(s, status, failure)
	return controller.RetryKcpLater(fmt.Errorf("deleting kcp's Shard %q from the root workspace: %w", s.Name, err))
}

// setDeregistered sets the Deregistered condition, and says so in an Event when it changed.
func (c *Controller) setDeregistered(s *operatorv1alpha1.Shard, status *operatorv1alpha1.ShardStatus, r kcphealth.Result) {
	before := meta.FindStatusCondition(s.Status.Conditions, operatorv1alpha1.ConditionDeregistered)
	if before != nil && before.Status == r.Status && before.Reason == r.Reason {
		// The same failure again: its first message stands, since a transport error's text
		// varies between attempts and a status write would requeue the Shard at once, past
		// the queue's backoff.
		controller.SetCondition(&status.Conditions, s.Generation, operatorv1alpha1.ConditionDeregistered, r.Status, r.Reason, before.Message)
		return
	}
	controller.SetCondition(&status.Conditions, s.Generation, operatorv1alpha1.ConditionDeregistered, r.Status, r.Reason, r.Message)
	if r.Status == metav1.ConditionTrue {
		c.Recorder.Event(s, corev1.EventTypeNormal, "Deregistered", r.Message)
		return
	}
	c.Recorder.Event(s, corev1.EventTypeWarning, "DeregistrationFailed", r.Message)
}
