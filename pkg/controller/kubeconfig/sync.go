package kubeconfig

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/kubeconfig"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// Reconcile brings the host cluster, and kcp where spec.authorization says, in line with one
// Kubeconfig. A failure in kcp fails nothing of the host's: the status, with the condition
// that says why, is written as after a success, and then the key is retried with backoff
// (RetryAfterStatus: an unreachable kcp sends no event that would bring it back).
func (c *Controller) Reconcile(ctx context.Context, kc *operatorv1alpha1.Kubeconfig, status *operatorv1alpha1.KubeconfigStatus) error {
	inKcp, err := c.reconcile(ctx, kc, status)
	if err != nil {
		return err
	}
	return controller.RetryAfterStatus(inKcp)
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
	if l := kc.Spec.Target.RootShardLink; l != nil {
		c.SetLinkReady(kc, status, l.SecretRef.Name)
	}
	if r.reason != "" {
		c.targetMissing(kc, status, r.reason, r.message)
		return c.authorize(ctx, kc, status, nil), nil
	}
	k := kubeconfig.Kubeconfig{Kubeconfig: kc, Target: r.target, MaxValidity: c.maxValidity}
	status.TargetName = k.Target.String()
	status.Validity = &metav1.Duration{Duration: k.Validity()}
	controller.SetCondition(&status.Conditions, kc.Generation, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionTrue,
		operatorv1alpha1.ReasonReferencesFound, "every referenced object exists")

	cert := k.Certificate()
	wrote, out, err := c.realize(ctx, k, cert, r.joined)
	c.Applied(kc, wrote, err)
	if err != nil {
		return nil, err
	}
	inKcp = c.authorize(ctx, kc, status, r.rootShard)
	if out.reason == operatorv1alpha1.ReasonSecretConflict {
		c.failed(kc, status, out.reason, out.message)
		return inKcp, nil
	}
	controller.SetCertificatesReady(&status.Conditions, kc.Generation, 1,
		c.Host.PendingCertificates([]*cmapply.CertificateApplyConfiguration{cert}))
	if out.reason == "" {
		status.ExpirationTimestamp = &metav1.Time{Time: out.notAfter}
		controller.SetCondition(&status.Conditions, kc.Generation, operatorv1alpha1.ConditionAvailable, metav1.ConditionTrue,
			operatorv1alpha1.ReasonKubeconfigWritten, fmt.Sprintf("the kubeconfig is written to the Secret %s", k.SecretName()))
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
	w := c.Host.Writes(ctx)
	w.Joined(joined)
	w.Certificates(nil, []*cmapply.CertificateApplyConfiguration{cert})
	secret, out, err := c.secret(k)
	if w.Built(err) && secret != nil {
		w.Secrets(secret)
		w.Do(func(ctx context.Context) (int, error) { return c.deleteStaleSecrets(ctx, k) })
	}
	wrote, err := w.Done()
	return wrote, out, err
}

// secret is the kubeconfig Secret once cert-manager issued the certificate and the
// RootShard's CA bundle is written, with the certificate's expiry; until then nil, and why
// not.
func (c *Controller) secret(k kubeconfig.Kubeconfig) (*corev1ac.SecretApplyConfiguration, outcome, error) {
	issued, err := c.Host.Issued(k.Namespace, k.CertificateName(), corev1.TLSCertKey, corev1.TLSPrivateKeyKey)
	if err != nil {
		return nil, outcome{}, err
	}
	if issued == nil {
		return nil, outcome{reason: operatorv1alpha1.ReasonCertificatePending,
			message: fmt.Sprintf("waiting for cert-manager to issue the Certificate %s", k.CertificateName())}, nil
	}
	notAfter, err := expiry(issued.Data[corev1.TLSCertKey])
	if err != nil {
		// cert-manager writes it again; that event brings the Kubeconfig back.
		return nil, outcome{reason: operatorv1alpha1.ReasonCertificatePending,
			message: fmt.Sprintf("the Secret %s holds no usable certificate yet: %v", issued.Name, err)}, nil
	}
	bundle, found, err := c.Host.OwnCABundle(k.Namespace, k.Target.CABundleSecret())
	if err != nil {
		return nil, outcome{}, err
	}
	if !found {
		return nil, outcome{reason: operatorv1alpha1.ReasonCABundlePending, message: fmt.Sprintf("waiting for the CA bundle %s of RootShard %s",
			k.Target.CABundleSecret(), k.Target.RootShard.Name)}, nil
	}
	secret, err := k.Secret(bundle, issued.Data[corev1.TLSCertKey], issued.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return nil, outcome{}, err
	}
	return secret, outcome{notAfter: notAfter}, nil
}

// secretConflict is a SecretConflict outcome when spec.secretRef.name names a Secret that is
// not this Kubeconfig's to write: applying would take it over, and deletion would delete it.
func (c *Controller) secretConflict(ctx context.Context, k kubeconfig.Kubeconfig) (outcome, error) {
	name := k.SecretName()
	conflict := outcome{reason: operatorv1alpha1.ReasonSecretConflict, message: fmt.Sprintf(
		"the Secret %s exists and is not this Kubeconfig's kubeconfig Secret; choose another spec.secretRef.name", name)}
	if name == k.CertificateName() {
		conflict.message = fmt.Sprintf("spec.secretRef.name %s is the Secret cert-manager issues the certificate into", name)
		return conflict, nil
	}
	existing, err := c.Host.AnySecret(ctx, k.Namespace, name)
	if err != nil || existing == nil {
		return outcome{}, err
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
	return c.Host.DeleteSecrets(ctx, k.Namespace, selector, func(s *corev1.Secret) bool {
		return s.Name == k.SecretName() || s.Labels[pki.LabelOwnerUID] != "" && s.Labels[pki.LabelOwnerUID] != string(k.UID)
	})
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

// Watches are what a Kubeconfig's reconcile reads.
func (c *Controller) Watches() controller.Watches {
	return controller.Watches{
		Kinds: []controller.Reference{
			// A target that appears heals ReferenceValid; one that changes changes the kubeconfig.
			{Kind: kinds.RootShard, Keys: func(m metav1.Object) []string { return c.ofRootShard(m.GetNamespace(), m.GetName()) }},
			{Kind: kinds.Shard, Keys: func(m metav1.Object) []string {
				return c.targeting(m.GetNamespace(), kubeconfig.ShardTarget, m.GetName())
			}},
			{Kind: kinds.FrontProxy, Keys: func(m metav1.Object) []string {
				return c.targeting(m.GetNamespace(), kubeconfig.FrontProxyTarget, m.GetName())
			}},
		},
		// cert-manager's Secret, issued and renewed, and the kubeconfig Secret; and the
		// RootShard's server CA bundle that every kubeconfig of it trusts. For a RootShard
		// of a reference Secret, the local CA Secrets and Issuer it signs with.
		Host:  []controller.HostResource{controller.Secrets, controller.Certificates, controller.Issuers},
		Users: c.users,
		// The copy of a kubeconfig-issuer Secret appearing, fixed or renewed.
		Referencing: func(namespace, name string) []string {
			return c.targeting(namespace, kubeconfig.RootShardSecretTarget, name)
		},
	}
}

// users are the Kubeconfigs a host object concerns besides its owner: for a RootShard's
// merged CA bundle, every Kubeconfig toward that RootShard or its Shards and FrontProxies.
func (c *Controller) users(m metav1.Object) []string {
	if rs := m.GetLabels()[pki.OwnerLabel(rootshard.Kind)]; rs != "" &&
		m.GetName() == rootshard.MergedCABundleName(&operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: rs}}) {
		return c.ofRootShard(m.GetNamespace(), rs)
	}
	// A FrontProxy's own CA bundle, which the Kubeconfigs toward it trust.
	if fp := m.GetLabels()[pki.OwnerLabel(frontproxy.Kind)]; fp != "" && m.GetLabels()[pki.LabelComponent] == "merged-ca-bundle" {
		return c.targeting(m.GetNamespace(), kubeconfig.FrontProxyTarget, fp)
	}
	return nil
}

// targeting are the keys of the Kubeconfigs of a namespace whose target is kind/name.
func (c *Controller) targeting(namespace, kind, name string) []string {
	return c.Keys(controller.TargetIndex, controller.TargetValue(namespace, kind, name))
}

// ofRootShard are the keys of the Kubeconfigs whose credentials a RootShard signs: toward
// the RootShard itself, or toward one of its Shards or FrontProxies.
func (c *Controller) ofRootShard(namespace, rootShard string) []string {
	keys := c.targeting(namespace, kubeconfig.RootShardTarget, rootShard)
	for _, s := range kinds.ShardsOf(c.Indexes, namespace, rootShard) {
		keys = append(keys, c.targeting(namespace, kubeconfig.ShardTarget, s.Name)...)
	}
	for _, fp := range kinds.FrontProxiesOf(c.Indexes, namespace, rootShard) {
		keys = append(keys, c.targeting(namespace, kubeconfig.FrontProxyTarget, fp.Name)...)
	}
	return keys
}
