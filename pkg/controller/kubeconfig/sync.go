package kubeconfig

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/kubeconfig"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// sync brings the host cluster, and kcp where spec.authorization says, in line with one
// Kubeconfig and reports back in its status. A failure in kcp fails nothing of the host's:
// the status, with the condition that says why, is written as after a success, and then the
// failure is returned so that the queue retries the key with backoff (an unreachable kcp
// sends no event that would bring it back).
func (c *Controller) sync(ctx context.Context, key string) error {
	l := c.lifecycle()
	var inKcp error
	err := l.Sync(ctx, key, l.RequiringCertManager(func(ctx context.Context, kc *operatorv1alpha1.Kubeconfig, status *operatorv1alpha1.KubeconfigStatus) error {
		var err error
		inKcp, err = c.reconcile(ctx, kc, status)
		return err
	}))
	if err != nil {
		return err
	}
	return inKcp
}

// lifecycle is the Kubeconfig's finalizer, status and deletion. Deletion first removes the
// bindings of spec.authorization from kcp (release), then the Certificate, cert-manager's
// Secret and the kubeconfig Secret: all carry the owner label.
func (c *Controller) lifecycle() controller.Lifecycle[*operatorv1alpha1.Kubeconfig, operatorv1alpha1.KubeconfigStatus] {
	opts := metav1.UpdateOptions{FieldManager: controller.FieldManager}
	return controller.Lifecycle[*operatorv1alpha1.Kubeconfig, operatorv1alpha1.KubeconfigStatus]{
		Kind: kubeconfig.Kind, Noun: "kubeconfig", Finalizer: Finalizer,
		Get: func(ns, name string) (*operatorv1alpha1.Kubeconfig, error) {
			return c.kubeconfigs.Kubeconfigs(ns).Get(name)
		},
		Update: func(ctx context.Context, kc *operatorv1alpha1.Kubeconfig) (*operatorv1alpha1.Kubeconfig, error) {
			return c.client.OperatorV1alpha1().Kubeconfigs(kc.Namespace).Update(ctx, kc, opts)
		},
		UpdateStatus: func(ctx context.Context, kc *operatorv1alpha1.Kubeconfig) (*operatorv1alpha1.Kubeconfig, error) {
			return c.client.OperatorV1alpha1().Kubeconfigs(kc.Namespace).UpdateStatus(ctx, kc, opts)
		},
		Status: func(kc *operatorv1alpha1.Kubeconfig) *operatorv1alpha1.KubeconfigStatus { return &kc.Status },
		Common: func(s *operatorv1alpha1.KubeconfigStatus) controller.Common {
			// A Kubeconfig's phases (Provisioning, Ready, Failed) are not a setup's: reconcile
			// sets them, and deletion shows as Available=False with reason Deleting.
			return controller.Common{ObservedGeneration: &s.ObservedGeneration, Conditions: &s.Conditions,
				OwnPhase: func() string { return string(s.Phase) }}
		},
		Release: c.release,
		Host:    c.host, Recorder: c.recorder,
	}
}

// reconcile realizes a Kubeconfig once its target exists, in the host cluster and then in
// kcp, and observes the result. It returns the failure in kcp apart (inKcp): that one is
// reported in the status and retried, and fails nothing of the host's.
func (c *Controller) reconcile(ctx context.Context, kc *operatorv1alpha1.Kubeconfig, status *operatorv1alpha1.KubeconfigStatus) (inKcp, err error) {
	kind, name := kubeconfig.TargetRef(kc)
	status.TargetName = kind + "/" + name
	r, err := c.resolve(ctx, kc)
	if err != nil {
		return nil, err
	}
	if r.reason != "" {
		c.targetMissing(kc, status, r.reason, r.message)
		return c.authorize(ctx, kc, status, nil), nil
	}
	k := kubeconfig.Kubeconfig{Kubeconfig: kc, Target: r.target}
	status.TargetName = k.Target.String()
	controller.SetCondition(&status.Conditions, kc.Generation, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionTrue,
		controller.ReasonReferencesFound, "every referenced object exists")

	cert := k.Certificate()
	wrote, out, err := c.realize(ctx, k, cert, r.joined)
	c.lifecycle().Applied(kc, wrote, err)
	if err != nil {
		return nil, err
	}
	inKcp = c.authorize(ctx, kc, status, r.rootShard)
	if out.reason == ReasonSecretConflict {
		c.failed(kc, status, out.reason, out.message)
		return inKcp, nil
	}
	controller.SetCertificatesReady(&status.Conditions, kc.Generation, 1,
		c.host.PendingCertificates([]*cmapply.CertificateApplyConfiguration{cert}))
	if out.reason == "" {
		status.ExpirationTimestamp = &metav1.Time{Time: out.notAfter}
		controller.SetCondition(&status.Conditions, kc.Generation, operatorv1alpha1.ConditionAvailable, metav1.ConditionTrue,
			ReasonKubeconfigWritten, fmt.Sprintf("the kubeconfig is written to the Secret %s", k.SecretName()))
	} else {
		controller.SetCondition(&status.Conditions, kc.Generation, operatorv1alpha1.ConditionAvailable, metav1.ConditionFalse,
			out.reason, out.message)
	}
	status.Phase = phase(status.Conditions)
	return inKcp, nil
}

// outcome is what realize got to: the kubeconfig Secret written, with the expiry of the
// certificate in it, or the reason and message of why not yet.
type outcome struct {
	notAfter        time.Time
	reason, message string
}

// realize applies the Kubeconfig's Certificate and, once cert-manager issued it and the
// RootShard's CA bundle is written, the kubeconfig Secret; their events bring the Kubeconfig
// back until then, and whenever cert-manager renews the certificate. For a RootShard joined
// from a reference Secret, the local CA Secrets and Issuer that sign and the CA bundle come
// first (joined). It returns how many objects it wrote.
func (c *Controller) realize(ctx context.Context, k kubeconfig.Kubeconfig, cert *cmapply.CertificateApplyConfiguration,
	joined *reference.Joined) (int, outcome, error) {
	if out, err := c.secretConflict(ctx, k); out.reason != "" || err != nil {
		return 0, out, err
	}
	wrote := 0
	if joined != nil {
		n, err := c.host.ApplyJoined(ctx, *joined)
		wrote += n
		if err != nil {
			return wrote, outcome{}, err
		}
	}
	// ApplyCertificates issues the certificate again when its CA rotated (docs/rotation.md).
	n, err := c.host.ApplyCertificates(ctx, nil, []*cmapply.CertificateApplyConfiguration{cert})
	wrote += n
	if err != nil {
		return wrote, outcome{}, err
	}

	secrets := c.host.Secrets.Secrets(k.Namespace)
	issued, err := secrets.Get(k.CertificateName())
	if apierrors.IsNotFound(err) || (err == nil && (len(issued.Data["tls.crt"]) == 0 || len(issued.Data["tls.key"]) == 0)) {
		return wrote, outcome{reason: ReasonCertificatePending,
			message: fmt.Sprintf("waiting for cert-manager to issue the Certificate %s", k.CertificateName())}, nil
	}
	if err != nil {
		return wrote, outcome{}, err
	}
	notAfter, err := expiry(issued.Data["tls.crt"])
	if err != nil {
		// cert-manager writes it again; that event brings the Kubeconfig back.
		return wrote, outcome{reason: ReasonCertificatePending,
			message: fmt.Sprintf("the Secret %s holds no usable certificate yet: %v", issued.Name, err)}, nil
	}
	bundle, err := secrets.Get(k.Target.CABundleSecret())
	if apierrors.IsNotFound(err) || (err == nil && len(bundle.Data["tls.crt"]) == 0) {
		return wrote, outcome{reason: ReasonCABundlePending, message: fmt.Sprintf("waiting for the CA bundle %s of RootShard %s",
			k.Target.CABundleSecret(), k.Target.RootShard.Name)}, nil
	}
	if err != nil {
		return wrote, outcome{}, err
	}

	secret, err := k.Secret(bundle.Data["tls.crt"], issued.Data["tls.crt"], issued.Data["tls.key"])
	if err != nil {
		return wrote, outcome{}, err
	}
	w, err := c.host.SecretApplier.ApplyIfChanged(ctx, secret)
	if err != nil {
		return wrote, outcome{}, err
	}
	wrote += controller.Count(w)
	deleted, err := c.deleteStaleSecrets(ctx, k)
	return wrote + deleted, outcome{notAfter: notAfter}, err
}

// secretConflict is a SecretConflict outcome when spec.secretRef.name names a Secret that is
// not this Kubeconfig's to write: applying would take it over, and deletion would delete it.
func (c *Controller) secretConflict(ctx context.Context, k kubeconfig.Kubeconfig) (outcome, error) {
	name := k.SecretName()
	conflict := outcome{reason: ReasonSecretConflict, message: fmt.Sprintf(
		"the Secret %s exists and is not this Kubeconfig's kubeconfig Secret; choose another spec.secretRef.name", name)}
	if name == k.CertificateName() {
		conflict.message = fmt.Sprintf("spec.secretRef.name %s is the Secret cert-manager issues the certificate into", name)
		return conflict, nil
	}
	existing, err := c.host.Secrets.Secrets(k.Namespace).Get(name)
	if apierrors.IsNotFound(err) {
		// The cache holds only what the controllers wrote; someone else's Secret is read.
		existing, err = c.host.Kube.CoreV1().Secrets(k.Namespace).Get(ctx, name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return outcome{}, nil
	}
	if err != nil {
		return outcome{}, fmt.Errorf("reading the Secret %s/%s: %w", k.Namespace, name, err)
	}
	if !k.OwnsSecret(existing.Labels) {
		return conflict, nil
	}
	return outcome{}, nil
}

// deleteStaleSecrets deletes the kubeconfig Secrets the Kubeconfig wrote under an earlier
// spec.secretRef.name: each holds a live credential. It returns how many it deleted.
func (c *Controller) deleteStaleSecrets(ctx context.Context, k kubeconfig.Kubeconfig) (int, error) {
	selector := labels.SelectorFromSet(pki.Labels(kubeconfig.Kind, k.Name, kubeconfig.SecretComponent))
	owned, err := c.host.Secrets.Secrets(k.Namespace).List(selector)
	if err != nil {
		return 0, err
	}
	deleted := 0
	for _, s := range owned {
		if s.Name == k.SecretName() || s.Labels[pki.LabelOwnerUID] != "" && s.Labels[pki.LabelOwnerUID] != string(k.UID) {
			continue
		}
		err := c.host.Kube.CoreV1().Secrets(k.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			return deleted, fmt.Errorf("deleting the former kubeconfig Secret %s/%s: %w", k.Namespace, s.Name, err)
		}
		deleted++
	}
	return deleted, nil
}

// expiry is the NotAfter of the first certificate of a PEM chain: the leaf cert-manager
// issued.
func expiry(chain []byte) (time.Time, error) {
	block, _ := pem.Decode(chain)
	if block == nil || block.Type != "CERTIFICATE" {
		return time.Time{}, errors.New("no PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return time.Time{}, fmt.Errorf("parsing the certificate: %w", err)
	}
	return cert.NotAfter, nil
}
