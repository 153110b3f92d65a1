package kubeconfig

import (
	"context"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/credentials"
	"github.com/kcp-setups/apiserver/pkg/resources/kubeconfig"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// resolved is a Kubeconfig's target, or the reason and message of why it cannot be resolved
// yet.
type resolved struct {
	target credentials.Target
	// rootShard is the RootShard whose kcp the server reaches as its own identity; nil for
	// one joined from a reference Secret, toward whose kcp the server has no identity.
	rootShard *operatorv1alpha1.RootShard
	// joined, for a target of a reference Secret, is what the Kubeconfig realizes from it:
	// the local copy of the front-proxy-client CA that signs, and the server CA bundle.
	joined          *reference.Joined
	reason, message string
}

// resolve looks up what a Kubeconfig points at, and the RootShard that signs for it.
func (c *Controller) resolve(ctx context.Context, kc *operatorv1alpha1.Kubeconfig) (resolved, error) {
	ns := kc.Namespace
	kind, name := kubeconfig.TargetRef(kc)
	var (
		s     *operatorv1alpha1.Shard
		fp    *operatorv1alpha1.FrontProxy
		rs    string
		owner string // what names the RootShard, in messages
		err   error
	)
	switch kind {
	case "":
		// Validation requires a target; should one be missing, the key is retried.
		return resolved{}, fmt.Errorf("the Kubeconfig %s/%s names no target", ns, kc.Name)
	case kubeconfig.RootShardTarget:
		rs = name
	case kubeconfig.RootShardSecretTarget:
		return c.resolveSecret(ctx, kc, name)
	case kubeconfig.LinkTarget:
		return c.resolveLinked(ctx, kc, name)
	case kubeconfig.ShardTarget:
		s, err = kinds.Shard.Lister(c.Indexes, ns).Get(name)
		if ok, res, err := found(err, operatorv1alpha1.ReasonShardNotFound, notFound(kind, name, ns)); !ok {
			return res, err
		}
		rs, owner = rootShardName(s.Spec.RootShard), fmt.Sprintf(" of Shard %q", name)
	case kubeconfig.FrontProxyTarget:
		fp, err = kinds.FrontProxy.Lister(c.Indexes, ns).Get(name)
		if ok, res, err := found(err, operatorv1alpha1.ReasonFrontProxyNotFound, notFound(kind, name, ns)); !ok {
			return res, err
		}
		rs, owner = rootShardName(fp.Spec.RootShard), fmt.Sprintf(" of FrontProxy %q", name)
	}
	rootShard, err := kinds.RootShard.Lister(c.Indexes, ns).Get(rs)
	if ok, res, err := found(err, operatorv1alpha1.ReasonRootShardNotFound,
		fmt.Sprintf("RootShard %q%s does not exist in namespace %q", rs, owner, ns)); !ok {
		return res, err
	}
	target, err := kubeconfig.TargetOf(kc, rootShard, s, fp)
	if err != nil {
		return resolved{}, err
	}
	return resolved{target: target, rootShard: rootShard}, nil
}

// resolveSecret resolves the target of a Kubeconfig whose rootShardSecretRef names the
// reference Secret name: the RootShard joined from it. A Secret missing or invalid is a
// reason to wait, whose message names the key at fault and never its content.
func (c *Controller) resolveSecret(ctx context.Context, kc *operatorv1alpha1.Kubeconfig, name string) (resolved, error) {
	r, err := c.Host.ResolveReference(ctx, kc.Namespace, name, reference.KubeconfigIssuer)
	if problem, ok := hostcluster.ReferenceProblem(err); ok {
		return resolved{reason: problem.Reason, message: problem.Message}, nil
	}
	if err != nil {
		return resolved{}, err
	}
	joined := reference.Join(kubeconfig.Kind, kc.Namespace, kc.Name, r)
	target, err := kubeconfig.TargetOf(kc, joined.RootShard, nil, nil)
	if err != nil {
		return resolved{}, err
	}
	return resolved{target: target, joined: &joined}, nil
}

// resolveLinked resolves the target of a Kubeconfig whose rootShardLink names the bootstrap
// Secret bootstrap: the RootShard joined over that link, whose credential is signed over it
// (link.Join). The bootstrap or the bundles missing or invalid is a reason to wait.
func (c *Controller) resolveLinked(ctx context.Context, kc *operatorv1alpha1.Kubeconfig, bootstrap string) (resolved, error) {
	joined, err := c.Host.JoinLinked(ctx, kubeconfig.Kind, kc.Namespace, kc.Name, bootstrap, reference.KubeconfigIssuer)
	if problem, ok := hostcluster.ReferenceProblem(err); ok {
		return resolved{reason: problem.Reason, message: problem.Message}, nil
	}
	if err != nil {
		return resolved{}, err
	}
	target, err := kubeconfig.TargetOf(kc, joined.RootShard, nil, nil)
	if err != nil {
		return resolved{}, err
	}
	return resolved{target: target, joined: joined}, nil
}

// found tells whether the read of a target that ended with err found it. When not, resolve
// returns res and the error: a target not found is the reason, with message; another
// failure is the error.
func found(err error, reason, message string) (ok bool, res resolved, _ error) {
	if apierrors.IsNotFound(err) {
		return false, resolved{reason: reason, message: message}, nil
	}
	return err == nil, resolved{}, err
}

func notFound(kind, name, namespace string) string {
	return fmt.Sprintf("%s %q does not exist in namespace %q", kind, name, namespace)
}

func rootShardName(ref operatorv1alpha1.RootShardConfig) string {
	if ref.Reference == nil {
		return ""
	}
	return ref.Reference.Name
}

// targetMissing sets the status of a Kubeconfig whose target, or the target's RootShard,
// does not exist yet, or whose reference Secret is missing or invalid, and says so in an
// Event the first time. That object's informer event brings the Kubeconfig back when it
// appears or is fixed. Nothing realized is deleted meanwhile: the kubeconfig Secret keeps
// working until its certificate expires.
func (c *Controller) targetMissing(kc *operatorv1alpha1.Kubeconfig, status *operatorv1alpha1.KubeconfigStatus, reason, message string) {
	gen := kc.Generation
	controller.SetCondition(&status.Conditions, gen, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionFalse, reason, message)
	controller.SetCondition(&status.Conditions, gen, operatorv1alpha1.ConditionAvailable, metav1.ConditionFalse, reason,
		"waiting for the target "+status.TargetName)
	controller.SetCondition(&status.Conditions, gen, operatorv1alpha1.ConditionCertificatesReady, metav1.ConditionFalse, reason,
		"waiting for the RootShard's front-proxy-client CA")
	status.Phase = operatorv1alpha1.KubeconfigPhaseProvisioning
	c.eventOnChange(kc, status, reason, message)
}

// failed sets the status of a Kubeconfig that cannot be realized as it is, and says so in an
// Event the first time. Nothing more is applied until its spec changes.
func (c *Controller) failed(kc *operatorv1alpha1.Kubeconfig, status *operatorv1alpha1.KubeconfigStatus, reason, message string) {
	gen := kc.Generation
	controller.SetCondition(&status.Conditions, gen, operatorv1alpha1.ConditionAvailable, metav1.ConditionFalse, reason, message)
	controller.SetCondition(&status.Conditions, gen, operatorv1alpha1.ConditionCertificatesReady, metav1.ConditionFalse, reason,
		"no certificate is requested: "+message)
	status.Phase = operatorv1alpha1.KubeconfigPhaseFailed
	c.eventOnChange(kc, status, reason, message)
}

// eventOnChange records a Warning when the status is about to change, so that a resync
// does not repeat it.
func (c *Controller) eventOnChange(kc *operatorv1alpha1.Kubeconfig, status *operatorv1alpha1.KubeconfigStatus, reason, message string) {
	if !apiequality.Semantic.DeepEqual(&kc.Status, status) {
		c.Recorder.Event(kc, "Warning", reason, message)
	}
}

// phase is Ready once the certificate is issued, the kubeconfig Secret written and, when the
// Kubeconfig binds roles in kcp, its bindings are as the spec says; else Provisioning. Ready
// means the credential does what the spec declares: whoever waits for it (kubectl wait) and
// then uses it must not meet a 403 from bindings still missing, nor hold grants the spec
// dropped but kcp still has.
func phase(conditions []metav1.Condition) operatorv1alpha1.KubeconfigPhase {
	authorization := meta.FindStatusCondition(conditions, operatorv1alpha1.ConditionAuthorizationProvisioned)
	if meta.IsStatusConditionTrue(conditions, operatorv1alpha1.ConditionAvailable) &&
		meta.IsStatusConditionTrue(conditions, operatorv1alpha1.ConditionCertificatesReady) &&
		(authorization == nil || authorization.Status == metav1.ConditionTrue) {
		return operatorv1alpha1.KubeconfigPhaseReady
	}
	return operatorv1alpha1.KubeconfigPhaseProvisioning
}
