package shard

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kcphealth"
	"github.com/kcp-setups/apiserver/pkg/link/remote"
)

// releaseLinked deregisters a Shard joined over the link of the bootstrap Secret bootstrap:
// the server has no identity toward the home's kcp, so it asks the home, which deletes kcp's
// Shard object only while it carries this Shard's UID and routes to the base URL the home
// recorded for it (docs/talking-to-kcp.md). As for a local Shard: while the link or the
// home's kcp does not answer, the Shard stays in Deleting with Deregistered=False and is
// retried with backoff, and operator.kcp.io/skip-kcp-cleanup lets it go. A home that
// leaves kcp's Shard in place (409: not this Shard's registration) or refuses (403) lets it
// go with a Warning Event, as does a namespace being deleted, whose bootstrap Secret goes
// with it.
func (c *Controller) releaseLinked(ctx context.Context, s *operatorv1alpha1.Shard, status *operatorv1alpha1.ShardStatus, bootstrap string) error {
	skipped := func(format string, args ...any) error {
		c.Recorder.Eventf(s, corev1.EventTypeWarning, "DeregistrationSkipped",
			"kcp's Shard %q was not deleted from the home's root workspace: "+format, append([]any{s.Name}, args...)...)
		return nil
	}
	if c.LinkDeregister == nil {
		return skipped("this server runs no client of the link of the bootstrap Secret %s", bootstrap)
	}
	if s.Annotations[operatorv1alpha1.AnnotationSkipKcpCleanup] == "true" {
		return skipped("the Shard has the annotation %s", operatorv1alpha1.AnnotationSkipKcpCleanup)
	}
	if terminating, err := c.Host.NamespaceTerminating(ctx, s.Namespace); err != nil {
		return err
	} else if terminating {
		return skipped("namespace %s is being deleted, and the link's bootstrap Secret with it", s.Namespace)
	}
	attempt, cancel := context.WithTimeout(ctx, remote.RequestTimeout)
	defer cancel()
	err := c.LinkDeregister(attempt, s.Namespace, bootstrap, s.Name, string(s.UID))
	var answer *remote.StatusError
	switch {
	case err == nil:
		c.setDeregistered(s, status, kcphealth.Result{Status: metav1.ConditionTrue, Reason: operatorv1alpha1.ReasonDeregistered,
			Message: fmt.Sprintf("kcp's Shard %q is not in the home's root workspace any more", s.Name)})
		return nil
	case errors.As(err, &answer) && answer.Code == http.StatusConflict:
		msg := fmt.Sprintf("the home left kcp's Shard %q in its root workspace (%s): it is not this Shard's registration, or the home reaches no kcp", s.Name, answer.Reason)
		c.Recorder.Event(s, corev1.EventTypeWarning, "DeregistrationSkipped", msg)
		c.setDeregistered(s, status, kcphealth.Result{Status: metav1.ConditionTrue, Reason: operatorv1alpha1.ReasonDeregistered, Message: msg})
		return nil
	case remote.IsRefused(err):
		return skipped("the home refused to deregister it over the link of the bootstrap Secret %s: %v", bootstrap, err)
	}
	reason := operatorv1alpha1.ReasonLinkDisconnected
	if errors.As(err, &answer) {
		// The home answered: its kcp did not, or it asked to wait.
		reason = operatorv1alpha1.ReasonKcpUnreachable
	}
	c.setDeregistered(s, status, kcphealth.Result{Status: metav1.ConditionFalse, Reason: reason,
		Message: fmt.Sprintf("asking the home to delete kcp's Shard %q over the link of the bootstrap Secret %s: %v (retried with backoff; the annotation %s=true lets the Shard go without it)",
			s.Name, bootstrap, err, operatorv1alpha1.AnnotationSkipKcpCleanup)})
	return controller.RetryKcpLater(fmt.Errorf("deregistering the linked Shard %q through its home: %w", s.Name, err))
}
