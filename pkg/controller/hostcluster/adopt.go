package hostcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"slices"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// What kcp-operator puts on what it makes (its internal/resources): the managed-by value,
// the component of each of its kinds, and the label its Certificates' Secrets carry.
const (
	kcpOperatorManagedBy = "kcp-operator"
	labelAppName         = "app.kubernetes.io/name"
	// annotationCertificateName is cert-manager's, on the Secret it issues a Certificate into.
	annotationCertificateName = "cert-manager.io/certificate-name"
)

// kcpOperatorComponents are kcp-operator's app.kubernetes.io/component values of what it
// makes for an object of each of our kinds (by owner label kind).
var kcpOperatorComponents = map[string][]string{
	"rootshard":        {"rootshard", "rootshard-proxy"},
	"shard":            {"shard"},
	"frontproxy":       {"front-proxy"},
	"cacheserver":      {"cache-server"},
	"virtualworkspace": {"virtual-workspace"},
}

// KcpOperatorNames are the names kcp-operator makes in the host cluster for obj, one of our
// kinds (its internal/resources at v0.9): its Deployments and Services, ConfigMaps, Issuers,
// Certificates and their Secrets, and its Secrets. The front-proxy-client CA is among them:
// kcp-operator made it up to v0.7. A takeover adopts no other name: never a rotation's slot
// (-next, -trust), never a CA kcp-operator does not have (the etcd CAs).
func KcpOperatorNames(obj metav1.Object) []string {
	n := obj.GetName()
	with := func(prefix string, suffixes ...string) []string {
		out := make([]string, len(suffixes))
		for i, s := range suffixes {
			out[i] = prefix + "-" + s
		}
		return out
	}
	switch o := obj.(type) {
	case *operatorv1alpha1.RootShard:
		return slices.Concat(
			with(n, "kcp", "ca", "server-ca", "requestheader-client-ca", "client-ca", "service-account-ca", "front-proxy-client-ca",
				"server", "service-account", "virtual-workspaces", "logical-cluster-admin", "external-logical-cluster-admin",
				"client", "kcp-operator", "merged-ca-bundle", "merged-client-ca",
				"logical-cluster-admin-kubeconfig", "external-logical-cluster-admin-kubeconfig"),
			// The internal front proxy.
			with(n, "proxy", "proxy-config", "proxy-dynamic-kubeconfig", "proxy-server", "proxy-kubeconfig", "proxy-requestheader",
				"proxy-merged-client-ca", "proxy-merged-ca-bundle"),
		)
	case *operatorv1alpha1.Shard:
		return with(n, "shard-kcp", "server", "service-account", "virtual-workspaces", "client", "mounts-proxy",
			"logical-cluster-admin", "external-logical-cluster-admin", "client-kubeconfig",
			"logical-cluster-admin-kubeconfig", "external-logical-cluster-admin-kubeconfig", "merged-ca-bundle", "merged-client-ca")
	case *operatorv1alpha1.FrontProxy:
		out := with(n, "front-proxy", "config", "merged-client-ca", "merged-ca-bundle")
		if ref := o.Spec.RootShard.Reference; ref != nil {
			out = append(out, with(ref.Name+"-"+n, "server", "kubeconfig", "requestheader", "dynamic-kubeconfig")...)
		}
		return out
	case *operatorv1alpha1.CacheServer:
		return with(n, "cache-server", "ca", "server", "client-certificate", "kubeconfig")
	case *operatorv1alpha1.VirtualWorkspace:
		return with(n, "virtual-workspace", "server", "client", "merged-client-ca")
	}
	return nil
}

// kcpOperatorFor reports whether labels are kcp-operator's on what it makes for owner.
func kcpOperatorFor(owner Owner, l map[string]string) bool {
	return l[pki.LabelManagedBy] == kcpOperatorManagedBy && l[pki.LabelInstance] == owner.Name &&
		slices.Contains(kcpOperatorComponents[owner.Kind], l[pki.LabelComponent])
}

// adoptable reports whether existing, of kind, is what kcp-operator made for the owner of a
// reconcile that takes it over (Owner.Adopt): labelled by kcp-operator for an object of the
// owner's kind and name, under a name kcp-operator makes for it (Owner.KcpOperatorNames).
// A Secret is never adopted here: only as the Secret of kcp-operator's Certificate
// (adoptableSecret). When existing looks like kcp-operator's but is not adopted, why says
// why, for the NameConflict.
func adoptable(ctx context.Context, kind string, existing metav1.Object) (ok bool, why string) {
	o, ok := OwnerFrom(ctx)
	if !ok || !o.Adopt || !kcpOperatorFor(o, existing.GetLabels()) {
		return false, ""
	}
	if !slices.Contains(o.KcpOperatorNames, existing.GetName()) {
		return false, fmt.Sprintf("kcp-operator makes no %s of this name for the %s %s, so it is not taken over", kind, o.Kind, o.Name)
	}
	if kind == "Secret" {
		return false, "a Secret is taken over only as the Secret of kcp-operator's Certificate of its name"
	}
	if why := ownedByKcpOperator(existing); why != "" {
		return false, why
	}
	return true, ""
}

// kcpOperatorGroups are the API groups of kcp-operator's kinds: its six (up to v0.8 they
// own the Deployments, Services, Certificates and Secrets it makes) and, from v0.9, its
// Compiled* objects (which own its Deployments, Services and ConfigMaps).
var kcpOperatorGroups = []string{"operator.kcp.io", "deploy.operator.kcp.io"}

// ownedByKcpOperator says why existing, which kcp-operator made, cannot be taken over while
// an owner reference to one of kcp-operator's objects remains: once that owner is gone (or,
// for one of the six kinds, replaced by this server's object of the same name and another
// UID), the garbage collector would delete what was taken over, and a Service would come
// back with another address. Deleting kcp-operator's objects with --cascade=orphan removes
// those references (docs/kcp-operator.md).
func ownedByKcpOperator(existing metav1.Object) string {
	for _, ref := range existing.GetOwnerReferences() {
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil && slices.Contains(kcpOperatorGroups, gv.Group) {
			return fmt.Sprintf("not taken over: still owned by kcp-operator's %s %s (%s), whose deletion would delete it; delete kcp-operator's objects with --cascade=orphan first",
				ref.Kind, ref.Name, ref.APIVersion)
		}
	}
	return ""
}

// adoptableSecret reports whether the Secret existing, which the desired Certificate cert
// claims, is one cert-manager issued for kcp-operator's Certificate of that name, for the
// owner of a reconcile that takes it over: a name kcp-operator makes for the owner, the
// Certificate as the host holds it carries kcp-operator's labels for the owner and names the
// Secret, its Issuer's CA (a CA Issuer's Secret, or the certificate itself for a self-signed
// Issuer, both of the namespace) signed the Secret's tls.crt, and its tls.key is that
// certificate's key. Only such a Secret is adopted, and only its key is kept (keepKey): a
// Secret anyone may create with kcp-operator's labels is never taken for a CA.
func (h *Host) adoptableSecret(ctx context.Context, cert string, existing metav1.Object) (ok bool, why string) {
	o, ok := OwnerFrom(ctx)
	secret, isSecret := existing.(*corev1.Secret)
	if !ok || !o.Adopt || !isSecret || existing.GetLabels()[pki.LabelManagedBy] == pki.ManagedBy {
		return false, ""
	}
	ns, name := existing.GetNamespace(), existing.GetName()
	if !slices.Contains(o.KcpOperatorNames, name) {
		return false, fmt.Sprintf("kcp-operator makes no Secret of this name for the %s %s, so it is not taken over", o.Kind, o.Name)
	}
	if why := ownedByKcpOperator(existing); why != "" {
		return false, why
	}
	refuse := func(format string, args ...any) (bool, string) {
		return false, "not taken over as kcp-operator's: " + fmt.Sprintf(format, args...)
	}
	found, err := h.CertificateApplier.Lookup(ctx, ns, cert)
	if err != nil {
		return refuse("kcp-operator's Certificate %s cannot be read: %v", cert, err)
	}
	c, isCert := found.(*cmv1.Certificate)
	if !isCert || !kcpOperatorFor(o, c.Labels) || c.Spec.SecretName != name {
		return refuse("no Certificate of kcp-operator's for the %s %s issues it", o.Kind, o.Name)
	}
	crt := firstCertificate(secret.Data[corev1.TLSCertKey])
	if crt == nil {
		return refuse("its tls.crt holds no certificate")
	}
	if _, err := tls.X509KeyPair(secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey]); err != nil {
		return refuse("its tls.key is not the key of its tls.crt")
	}
	ref := c.Spec.IssuerRef
	if (ref.Kind != "" && ref.Kind != cmv1.IssuerKind) || (ref.Group != "" && ref.Group != cmv1.SchemeGroupVersion.Group) {
		return refuse("its Certificate's issuer %s %s is not an Issuer of the namespace, whose CA could be read", ref.Kind, ref.Name)
	}
	found, err = h.IssuerApplier.Lookup(ctx, ns, ref.Name)
	if err != nil {
		return refuse("its Certificate's Issuer %s cannot be read: %v", ref.Name, err)
	}
	issuer, _ := found.(*cmv1.Issuer)
	var ca *x509.Certificate
	switch {
	case issuer == nil:
		return refuse("its Certificate's Issuer %s cannot be read", ref.Name)
	case issuer.Spec.SelfSigned != nil:
		ca = crt
	case issuer.Spec.CA != nil:
		found, err := h.SecretApplier.Lookup(ctx, ns, issuer.Spec.CA.SecretName)
		if s, isSecret := found.(*corev1.Secret); err == nil && isSecret {
			ca = firstCertificate(s.Data[corev1.TLSCertKey])
		}
		if ca == nil {
			return refuse("the CA Secret %s of its Certificate's Issuer %s holds no certificate", issuer.Spec.CA.SecretName, ref.Name)
		}
	default:
		return refuse("its Certificate's Issuer %s is neither a CA nor a self-signed Issuer, whose CA could be read", ref.Name)
	}
	if crt.CheckSignatureFrom(ca) != nil {
		return refuse("its tls.crt is not signed by the CA of its Certificate's Issuer %s", ref.Name)
	}
	return true, ""
}

// kcpOperatorSelector selects what kcp-operator made for the object name of kind.
func kcpOperatorSelector(kind, name string) (string, error) {
	components, ok := kcpOperatorComponents[kind]
	if !ok {
		return "", fmt.Errorf("kcp-operator makes nothing for a %s", kind)
	}
	component, err := labels.NewRequirement(pki.LabelComponent, selection.In, components)
	if err != nil {
		return "", err
	}
	return labels.SelectorFromSet(labels.Set{pki.LabelManagedBy: kcpOperatorManagedBy, pki.LabelInstance: name}).
		Add(*component).String(), nil
}

// WithKcpOperatorTakeover readies the host's appliers for a takeover of what kcp-operator
// made (Owner.Adopt): an adopted Deployment, whose selector cannot change, is replaced, and
// an adopted Service gets our selector and ports before the apply. What is adopted, and
// only that, is decided by the claim (adoptable, adoptableSecret).
func (h *Host) WithKcpOperatorTakeover() *Host {
	h.DeploymentApplier.Adopt = h.replaceDeployment
	h.ServiceApplier.Adopt = h.takeOverService
	return h
}

// replaceDeployment deletes kcp-operator's Deployment, as read, for ours to replace it: a
// Deployment's selector cannot change, so kcp-operator's pods roll.
func (h *Host) replaceDeployment(ctx context.Context, existing metav1.Object, _ *appsv1ac.DeploymentApplyConfiguration) error {
	uid, background := existing.GetUID(), metav1.DeletePropagationBackground
	err := h.Kube.AppsV1().Deployments(existing.GetNamespace()).Delete(ctx, existing.GetName(),
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &background})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// takeOverService makes kcp-operator's Service's selector and ports ours before the apply,
// held to the UID read: a Service keeps its address, and the apply would otherwise keep
// kcp-operator's selector keys next to ours (selecting no pod) and its ports next to ours
// (two named https).
func (h *Host) takeOverService(ctx context.Context, existing metav1.Object, o *corev1ac.ServiceApplyConfiguration) error {
	if o.Spec == nil {
		return nil
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": existing.GetUID()},
		{"op": "replace", "path": "/spec/selector", "value": o.Spec.Selector},
		{"op": "replace", "path": "/spec/ports", "value": o.Spec.Ports},
	})
	if err != nil {
		return err
	}
	_, err = h.Kube.CoreV1().Services(existing.GetNamespace()).Patch(ctx, existing.GetName(), types.JSONPatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager})
	return err
}
