package kubeconfig

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/kcpclient"
	"github.com/kcp-setups/apiserver/pkg/resources/kubeconfig"
)

// The reasons of the Events about a Kubeconfig's bindings in kcp, beyond the condition's.
const (
	// EventBindingsWritten: ClusterRoleBindings were created, updated or deleted in kcp.
	EventBindingsWritten = "BindingsWritten"
	// EventKcpCleanupSkipped: deletion left the bindings in kcp, as the annotation asks.
	EventKcpCleanupSkipped = "KcpCleanupSkipped"
	// EventKcpGone: deletion found the RootShard gone, and its kcp with the bindings.
	EventKcpGone = "KcpGone"
)

// provisionedCluster is where the status says the Kubeconfig's bindings are; empty when none.
func provisionedCluster(s *operatorv1alpha1.KubeconfigStatus) string {
	if s.Authorization == nil {
		return ""
	}
	return s.Authorization.ProvisionedCluster
}

// authorize brings kcp in line with spec.authorization: the bindings in the workspace
// BindingWorkspace names, none anywhere else. rs is the RootShard of the target, nil while
// it does not exist. Where they are is read from kc's status as stored, never from the
// status being built: the workspace is recorded (one status write) before anything is
// created there, and that write's informer event brings the Kubeconfig back to create them.
// So a deletion, or a spec that moves them, always knows where to remove them from.
//
// A failure to reach kcp is set on status (AuthorizationProvisioned) and returned, for the
// caller to retry with backoff once the status and the host-side work are written.
func (c *Controller) authorize(ctx context.Context, kc *operatorv1alpha1.Kubeconfig, status *operatorv1alpha1.KubeconfigStatus,
	rs *operatorv1alpha1.RootShard) error {
	want, have := kubeconfig.BindingWorkspace(kc), provisionedCluster(&kc.Status)
	if want == "" && have == "" {
		// Nothing about kcp: the condition is only for Kubeconfigs that bind.
		status.Authorization = nil
		meta.RemoveStatusCondition(&status.Conditions, operatorv1alpha1.ConditionAuthorizationProvisioned)
		return nil
	}
	if kind, name := kubeconfig.TargetRef(kc); kind == kubeconfig.RootShardSecretTarget || kind == kubeconfig.LinkTarget {
		// Nothing was ever bound (have is recorded only with a RootShard of ours), so
		// nothing is to be removed, on deletion either.
		c.setAuthorization(kc, status, metav1.ConditionFalse, operatorv1alpha1.ReasonNoKcpIdentity, fmt.Sprintf(
			"the server has no identity toward the kcp of the RootShard of the Secret %s to bind roles with: "+
				"remove spec.authorization and bind them in kcp yourself", name))
		return nil
	}
	if rs == nil {
		// The target's or RootShard's informer event brings the Kubeconfig back.
		c.setAuthorization(kc, status, metav1.ConditionFalse, operatorv1alpha1.ReasonWaitingForTarget,
			"waiting for the target "+status.TargetName+" and its RootShard")
		return nil
	}
	if have != "" && have != want {
		// The bindings leave where they are first, so that a moved or dropped authorization
		// never leaves a grant behind.
		if err := c.removeBindings(ctx, kc, rs, have); err != nil {
			return c.kcpFailed(kc, status, err, "removing the ClusterRoleBindings from workspace "+have)
		}
		if want == "" {
			status.Authorization = nil
			meta.RemoveStatusCondition(&status.Conditions, operatorv1alpha1.ConditionAuthorizationProvisioned)
			return nil
		}
		have = ""
	}
	if have == "" {
		status.Authorization = &operatorv1alpha1.KubeconfigAuthorizationStatus{ProvisionedCluster: want}
		c.setAuthorization(kc, status, metav1.ConditionFalse, operatorv1alpha1.ReasonProvisioning,
			"creating the ClusterRoleBindings in workspace "+want)
		return nil
	}
	w, err := c.bindingsIn(kc, rs, want)
	written, deleted := 0, 0
	if err == nil {
		written, deleted, err = w.ensure(ctx)
	}
	if err != nil {
		return c.kcpFailed(kc, status, err, "writing the ClusterRoleBindings in workspace "+want)
	}
	if written+deleted > 0 {
		c.Recorder.Eventf(kc, corev1.EventTypeNormal, EventBindingsWritten,
			"Wrote %d and deleted %d ClusterRoleBindings in kcp workspace %s", written, deleted, want)
	}
	c.setAuthorization(kc, status, metav1.ConditionTrue, operatorv1alpha1.ReasonProvisioned, fmt.Sprintf(
		"the ClusterRoles %s are bound to the group %s in workspace %s",
		strings.Join(kc.Spec.Authorization.ClusterRoleBindings.ClusterRoles, ", "), kubeconfig.Group(kc), want))
	return nil
}

// removeBindings deletes every binding of the Kubeconfig from workspace, and says so in an
// Event when there were any.
func (c *Controller) removeBindings(ctx context.Context, kc *operatorv1alpha1.Kubeconfig, rs *operatorv1alpha1.RootShard, workspace string) error {
	w, err := c.bindingsIn(kc, rs, workspace)
	if err != nil {
		return err
	}
	n, err := w.removeAll(ctx)
	if n > 0 {
		c.Recorder.Eventf(kc, corev1.EventTypeNormal, EventBindingsWritten,
			"Deleted %d ClusterRoleBindings from kcp workspace %s", n, workspace)
	}
	return err
}

// Release removes the Kubeconfig's bindings from kcp when it is being deleted (controller.Releaser), before
// Lifecycle deletes its Secret: while kcp cannot be reached, the Kubeconfig stays, with the
// condition saying why, and is retried with backoff. The annotation AnnotationSkipKcpCleanup
// lets it go without; so does a RootShard that is gone, since its kcp went with it.
func (c *Controller) Release(ctx context.Context, kc *operatorv1alpha1.Kubeconfig, status *operatorv1alpha1.KubeconfigStatus) error {
	workspace := provisionedCluster(&kc.Status)
	if workspace == "" {
		return nil
	}
	done := func() error {
		status.Authorization = nil
		meta.RemoveStatusCondition(&status.Conditions, operatorv1alpha1.ConditionAuthorizationProvisioned)
		return nil
	}
	if kind, _ := kubeconfig.TargetRef(kc); kind == kubeconfig.RootShardSecretTarget || kind == kubeconfig.LinkTarget {
		// Never bound (authorize), and no kcp the server could reach to unbind.
		return done()
	}
	if c.Host.NoKcpDialer {
		c.Recorder.Eventf(kc, corev1.EventTypeWarning, EventKcpCleanupSkipped,
			"The ClusterRoleBindings in kcp workspace %s are left in place: %v", workspace, kcpclient.ErrNoDialer)
		return done()
	}
	if kc.Annotations[operatorv1alpha1.AnnotationSkipKcpCleanup] == "true" {
		c.Recorder.Eventf(kc, corev1.EventTypeWarning, EventKcpCleanupSkipped,
			"The ClusterRoleBindings in kcp workspace %s are left in place, as the annotation %s asks",
			workspace, operatorv1alpha1.AnnotationSkipKcpCleanup)
		return done()
	}
	if terminating, err := c.Host.NamespaceTerminating(ctx, kc.Namespace); err != nil {
		return err
	} else if terminating {
		c.Recorder.Eventf(kc, corev1.EventTypeNormal, EventKcpGone,
			"namespace %s is being deleted, and its RootShards and their kcp with it: the ClusterRoleBindings in workspace %s go with them",
			kc.Namespace, workspace)
		return done()
	}
	rs, gone, err := c.rootShardOf(kc)
	if err != nil {
		return err
	}
	if gone != "" {
		c.Recorder.Eventf(kc, corev1.EventTypeNormal, EventKcpGone,
			"%s: its kcp, and the ClusterRoleBindings in workspace %s, went with it", gone, workspace)
		return done()
	}
	if rs == nil {
		kind, name := kubeconfig.TargetRef(kc)
		msg := fmt.Sprintf("the %s %s is gone, so which RootShard's kcp holds the ClusterRoleBindings in workspace %s is unknown: "+
			"recreate it, or set the annotation %s=true to let the Kubeconfig go without removing them",
			kind, name, workspace, operatorv1alpha1.AnnotationSkipKcpCleanup)
		c.setAuthorization(kc, status, metav1.ConditionFalse, operatorv1alpha1.ReasonRootShardUnknown, msg)
		return errors.New(msg)
	}
	if err := c.removeBindings(ctx, kc, rs, workspace); err != nil {
		return c.kcpFailed(kc, status, err, "removing the ClusterRoleBindings from workspace "+workspace)
	}
	return done()
}

// rootShardOf is the RootShard whose kcp holds a deleted Kubeconfig's bindings; or, when it
// is gone, a sentence that says so; or neither, when its target Shard or FrontProxy is gone
// while RootShards remain in the namespace.
func (c *Controller) rootShardOf(kc *operatorv1alpha1.Kubeconfig) (*operatorv1alpha1.RootShard, string, error) {
	ns := kc.Namespace
	kind, name := kubeconfig.TargetRef(kc)
	var ref operatorv1alpha1.RootShardConfig
	var err error
	switch kind {
	case kubeconfig.RootShardTarget:
		ref.Reference = &corev1.LocalObjectReference{Name: name}
	case kubeconfig.ShardTarget:
		var s *operatorv1alpha1.Shard
		if s, err = kinds.Shard.Lister(c.Indexes, ns).Get(name); err == nil {
			ref = s.Spec.RootShard
		}
	case kubeconfig.FrontProxyTarget:
		var fp *operatorv1alpha1.FrontProxy
		if fp, err = kinds.FrontProxy.Lister(c.Indexes, ns).Get(name); err == nil {
			ref = fp.Spec.RootShard
		}
	}
	if apierrors.IsNotFound(err) {
		remaining, err := kinds.RootShard.Lister(c.Indexes, ns).List(labels.Everything())
		if err != nil {
			return nil, "", err
		}
		if len(remaining) == 0 {
			return nil, fmt.Sprintf("The %s %s and every RootShard of namespace %s are gone", kind, name, ns), nil
		}
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	rs, err := kinds.RootShard.Lister(c.Indexes, ns).Get(rootShardName(ref))
	if apierrors.IsNotFound(err) {
		return nil, fmt.Sprintf("The RootShard %s is gone", rootShardName(ref)), nil
	}
	return rs, "", err
}

// setAuthorization sets AuthorizationProvisioned, with an Event when its status or reason
// changes, so that a retry that fails the same way does not repeat it.
func (c *Controller) setAuthorization(kc *operatorv1alpha1.Kubeconfig, status *operatorv1alpha1.KubeconfigStatus,
	s metav1.ConditionStatus, reason, message string) {
	controller.SetCondition(&status.Conditions, kc.Generation, operatorv1alpha1.ConditionAuthorizationProvisioned, s, reason, message)
	old := meta.FindStatusCondition(kc.Status.Conditions, operatorv1alpha1.ConditionAuthorizationProvisioned)
	if old != nil && old.Status == s && old.Reason == reason {
		return
	}
	eventType := corev1.EventTypeWarning
	if s != metav1.ConditionFalse || reason == operatorv1alpha1.ReasonProvisioning {
		eventType = corev1.EventTypeNormal
	}
	c.Recorder.Event(kc, eventType, reason, message)
}

// kcpFailed sets AuthorizationProvisioned=False for a failure to reach or write kcp while
// doing something, and returns the error to retry with.
func (c *Controller) kcpFailed(kc *operatorv1alpha1.Kubeconfig, status *operatorv1alpha1.KubeconfigStatus, err error, doing string) error {
	if c.Host.NoKcpDialer {
		// Not retried: nothing changes until the server is told otherwise, and a restart
		// reconciles every Kubeconfig anyway.
		c.setAuthorization(kc, status, metav1.ConditionUnknown, operatorv1alpha1.ReasonNoKcpDialer, doing+": "+kcpclient.ErrNoDialer.Error())
		return nil
	}
	c.setAuthorization(kc, status, metav1.ConditionFalse, kcpFailureReason(err), doing+": "+hostcluster.FailureMessage(err))
	return controller.RetryKcpLater(fmt.Errorf("%s in kcp: %w", doing, err))
}

// kcpFailureReason is the stable reason of a failure to reach or write kcp.
func kcpFailureReason(err error) string {
	var notReady *kcpclient.NotReadyError
	if errors.As(err, &notReady) {
		return operatorv1alpha1.ReasonWaitingForCredentials
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := int(status.Status().Code)
		if code >= 400 && code < 500 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests {
			return operatorv1alpha1.ReasonKcpRefused
		}
	}
	return operatorv1alpha1.ReasonKcpUnreachable
}
