// Package kubeconfig builds what a declared Kubeconfig needs in the host cluster from its
// spec and its target: the cert-manager Certificate of its client identity, signed by the
// RootShard's front-proxy-client CA, and the Secret that holds the kubeconfig file with that
// certificate and key embedded; and what it needs inside kcp: the ClusterRoleBindings of
// spec.authorization (bindings.go). Every function is pure.
package kubeconfig

import (
	"time"

	"fmt"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/credentials"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
)

// Kind is the owner label's kind of everything a Kubeconfig owns.
const Kind = "kubeconfig"

// The component labels of what a Kubeconfig owns.
const (
	// CertificateComponent labels the Certificate and the Secret cert-manager issues into.
	CertificateComponent = "kubeconfig"
	// SecretComponent labels the Secret spec.secretRef.name, which holds the kubeconfig.
	SecretComponent = "kubeconfig-secret"
)

// The kinds a Kubeconfig may point at, as credentials.Target and the Target column name them.
const (
	RootShardTarget  = "RootShard"
	ShardTarget      = "Shard"
	FrontProxyTarget = "FrontProxy"
	// RootShardSecretTarget is a RootShard named by a copy of its kubeconfig-issuer Secret
	// (spec.target.rootShardSecretRef): the target shows as Secret/<name>.
	RootShardSecretTarget = "Secret"
	// LinkTarget is a RootShard of another cluster, joined over the link of a bootstrap
	// Secret (spec.target.rootShardLink): the target shows as Link/<bootstrap Secret>.
	LinkTarget = "Link"
)

// Kubeconfig is a Kubeconfig with its resolved target: everything its objects depend on.
type Kubeconfig struct {
	*operatorv1alpha1.Kubeconfig
	Target credentials.Target
	// MaxValidity is the server's maximum validity (--max-kubeconfig-validity); zero bounds
	// nothing.
	MaxValidity time.Duration
}

// Validity is the lifetime the certificate is issued for: spec.validity, at most MaxValidity.
func (k Kubeconfig) Validity() time.Duration {
	if k.MaxValidity > 0 && k.Spec.Validity.Duration > k.MaxValidity {
		return k.MaxValidity
	}
	return k.Spec.Validity.Duration
}

// CertificateName is the name of a Kubeconfig's Certificate and of the Secret cert-manager
// issues it into (docs/PKI.md).
func CertificateName(kubeconfig string) string { return "kubeconfig-" + kubeconfig }

// CertificateName is the name of the Kubeconfig's Certificate and its cert-manager Secret.
func (k Kubeconfig) CertificateName() string { return CertificateName(k.Name) }

// SecretName is the Secret the kubeconfig file is written to.
func (k Kubeconfig) SecretName() string { return k.Spec.SecretRef.Name }

// TargetRef is the kind (RootShardTarget, ShardTarget, FrontProxyTarget,
// RootShardSecretTarget or LinkTarget) and name of what a Kubeconfig points at; both are empty when its
// target names nothing.
func TargetRef(kc *operatorv1alpha1.Kubeconfig) (kind, name string) {
	t := kc.Spec.Target
	switch {
	case t.RootShardRef != nil:
		return RootShardTarget, t.RootShardRef.Name
	case t.ShardRef != nil:
		return ShardTarget, t.ShardRef.Name
	case t.FrontProxyRef != nil:
		return FrontProxyTarget, t.FrontProxyRef.Name
	case t.RootShardSecretRef != nil:
		return RootShardSecretTarget, t.RootShardSecretRef.Name
	case t.RootShardLink != nil:
		return LinkTarget, t.RootShardLink.SecretRef.Name
	}
	return "", ""
}

// TargetOf is the credentials.Target of a Kubeconfig, given the objects its target names:
// rs is the RootShard that signs the credential (the target itself, the RootShard of the
// Shard or FrontProxy, or the RootShard joined from the reference Secret, reference.Join),
// s or fp the Shard or FrontProxy when that is the target. The others may be nil.
func TargetOf(kc *operatorv1alpha1.Kubeconfig, rs *operatorv1alpha1.RootShard, s *operatorv1alpha1.Shard,
	fp *operatorv1alpha1.FrontProxy) (credentials.Target, error) {
	kind, name := TargetRef(kc)
	if kind == "" {
		return credentials.Target{}, fmt.Errorf("the Kubeconfig %s/%s names no target", kc.Namespace, kc.Name)
	}
	if rs == nil {
		return credentials.Target{}, fmt.Errorf("the Kubeconfig %s/%s: the RootShard of %s/%s is missing", kc.Namespace, kc.Name, kind, name)
	}
	switch kind {
	case ShardTarget:
		if s == nil {
			return credentials.Target{}, fmt.Errorf("the Kubeconfig %s/%s: the Shard %s is missing", kc.Namespace, kc.Name, name)
		}
		return credentials.ForShard(s, rs), nil
	case FrontProxyTarget:
		if fp == nil {
			return credentials.Target{}, fmt.Errorf("the Kubeconfig %s/%s: the FrontProxy %s is missing", kc.Namespace, kc.Name, name)
		}
		return credentials.ForFrontProxy(fp, rs), nil
	case RootShardSecretTarget, LinkTarget:
		// The joined RootShard's, under the Secret's name: it is what the user named.
		t := credentials.ForRootShard(rs)
		t.Kind, t.Name = kind, name
		return t, nil
	default:
		return credentials.ForRootShard(rs), nil
	}
}

func (k Kubeconfig) labels(component string) map[string]string {
	return pki.Labels(Kind, k.Name, component)
}

// Secret builds the Secret spec.secretRef.name: the kubeconfig file toward the target, which
// trusts caBundle and presents the issued certificate and key, embedded as data, so that it
// works on its own wherever it is copied to.
func (k Kubeconfig) Secret(caBundle, certPEM, keyPEM []byte) (*corev1ac.SecretApplyConfiguration, error) {
	data, err := credentials.Kubeconfig(k.Target, k.Spec.TargetWorkspace, caBundle, certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("rendering the Kubeconfig %s/%s: %w", k.Namespace, k.Name, err)
	}
	return corev1ac.Secret(k.SecretName(), k.Namespace).WithLabels(k.labels(SecretComponent)).WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{kcp.KubeconfigKey: data}), nil
}

// OwnsSecret reports whether a Secret with these labels is the Kubeconfig's own kubeconfig
// Secret, as Secret writes it. Anything else under its spec.secretRef.name, including the
// Secret cert-manager issues into, is someone else's and must not be overwritten.
func (k Kubeconfig) OwnsSecret(labels map[string]string) bool {
	return labels[pki.LabelManagedBy] == pki.ManagedBy && labels[pki.OwnerLabel(Kind)] == k.Name &&
		labels[pki.LabelComponent] == SecretComponent
}
