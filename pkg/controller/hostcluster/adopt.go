package hostcluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

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

// kcpOperatorSecretLabels are the labels kcp-operator's Certificates put on their Secrets,
// naming the owner, by our owner label kind.
var kcpOperatorSecretLabels = map[string]string{
	"rootshard":        "operator.kcp.io/rootshard",
	"shard":            "operator.kcp.io/shard",
	"frontproxy":       "operator.kcp.io/front-proxy",
	"cacheserver":      "operator.kcp.io/cache-server",
	"virtualworkspace": "operator.kcp.io/virtual-workspace",
	"kubeconfig":       "operator.kcp.io/kubeconfig",
}

// adoptable reports whether existing is what kcp-operator made for the owner of a reconcile
// that adopts (Owner.Adopt): labelled by kcp-operator for an object of the owner's kind and
// name, or the Secret cert-manager issued for such a Certificate. Nothing else is ever
// adopted, and nothing at all without the owner's annotation.
func adoptable(ctx context.Context, existing metav1.Object) bool {
	o, ok := OwnerFrom(ctx)
	if !ok || !o.Adopt {
		return false
	}
	l := existing.GetLabels()
	if l[pki.LabelManagedBy] == pki.ManagedBy {
		return false // ours, for another owner
	}
	if l[pki.LabelManagedBy] == kcpOperatorManagedBy && l[pki.LabelInstance] == o.Name &&
		slices.Contains(kcpOperatorComponents[o.Kind], l[pki.LabelComponent]) {
		return true
	}
	key, ok := kcpOperatorSecretLabels[o.Kind]
	return ok && l[pki.LabelManagedBy] == "" && l[key] == o.Name && existing.GetAnnotations()[annotationCertificateName] != ""
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

// RemoveKcpOperatorLeftovers deletes, once an adopting object is realized (once per owner
// and process: a later reconcile lists nothing), what kcp-operator
// made for it that the controllers did not take over (they write their own labels on what
// they take over): its Deployments, Services, ConfigMaps, Issuers, and its leaf Certificates
// with their Secrets. A CA is never deleted: its key may still sign what someone holds. Each
// deletion is held to the UID read, and an Event says what went.
func (h *Host) RemoveKcpOperatorLeftovers(ctx context.Context, namespace, kind, name string, recorder record.EventRecorder, owner runtime.Object) error {
	if _, ok := kcpOperatorComponents[kind]; !ok {
		return nil
	}
	ownerUID := ""
	if m, err := meta.Accessor(owner); err == nil {
		ownerUID = string(m.GetUID())
	}
	if _, done := h.leftoversGone.Load(ownerUID); done && ownerUID != "" {
		return nil // found gone once: the reconciles that follow list nothing
	}
	selector, err := kcpOperatorSelector(kind, name)
	if err != nil {
		return err
	}
	opts := metav1.ListOptions{LabelSelector: selector}
	var gone []string
	del := func(what, name string, err error) error {
		if err == nil {
			gone = append(gone, what+" "+name)
			return nil
		}
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return fmt.Errorf("deleting kcp-operator's %s %s/%s: %w", what, namespace, name, err)
	}
	pre := func(uid string) metav1.DeleteOptions {
		u := types.UID(uid)
		background := metav1.DeletePropagationBackground
		return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &u}, PropagationPolicy: &background}
	}
	deployments, err := h.Kube.AppsV1().Deployments(namespace).List(ctx, opts)
	if err != nil {
		return err
	}
	for _, d := range deployments.Items {
		if err := del("Deployment", d.Name, h.Kube.AppsV1().Deployments(namespace).Delete(ctx, d.Name, pre(string(d.UID)))); err != nil {
			return err
		}
	}
	services, err := h.Kube.CoreV1().Services(namespace).List(ctx, opts)
	if err != nil {
		return err
	}
	for _, s := range services.Items {
		if err := del("Service", s.Name, h.Kube.CoreV1().Services(namespace).Delete(ctx, s.Name, pre(string(s.UID)))); err != nil {
			return err
		}
	}
	configMaps, err := h.Kube.CoreV1().ConfigMaps(namespace).List(ctx, opts)
	if err != nil {
		return err
	}
	for _, c := range configMaps.Items {
		if err := del("ConfigMap", c.Name, h.Kube.CoreV1().ConfigMaps(namespace).Delete(ctx, c.Name, pre(string(c.UID)))); err != nil {
			return err
		}
	}
	certs, err := h.CertManager.CertmanagerV1().Certificates(namespace).List(ctx, opts)
	if err != nil {
		return err
	}
	for _, c := range certs.Items {
		if c.Spec.IsCA {
			continue
		}
		if err := del("Certificate", c.Name, h.CertManager.CertmanagerV1().Certificates(namespace).Delete(ctx, c.Name, pre(string(c.UID)))); err != nil {
			return err
		}
		// Its Secret, unless someone else's by now.
		s, err := h.Kube.CoreV1().Secrets(namespace).Get(ctx, c.Spec.SecretName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if s.Labels[pki.LabelManagedBy] == pki.ManagedBy || s.Annotations[annotationCertificateName] != c.Name {
			continue
		}
		if err := del("Secret", s.Name, h.Kube.CoreV1().Secrets(namespace).Delete(ctx, s.Name, pre(string(s.UID)))); err != nil {
			return err
		}
	}
	secrets, err := h.Kube.CoreV1().Secrets(namespace).List(ctx, opts)
	if err != nil {
		return err
	}
	for _, s := range secrets.Items {
		if err := del("Secret", s.Name, h.Kube.CoreV1().Secrets(namespace).Delete(ctx, s.Name, pre(string(s.UID)))); err != nil {
			return err
		}
	}
	issuers, err := h.CertManager.CertmanagerV1().Issuers(namespace).List(ctx, opts)
	if err != nil {
		return err
	}
	for _, i := range issuers.Items {
		if i.Spec.CA != nil {
			continue // the CA's Issuer goes with the CA, which stays
		}
		if err := del("Issuer", i.Name, h.CertManager.CertmanagerV1().Issuers(namespace).Delete(ctx, i.Name, pre(string(i.UID)))); err != nil {
			return err
		}
	}
	// Everything listed is gone, or kept on purpose (CAs): nothing is left to look for.
	h.leftoversGone.Store(ownerUID, true)
	if len(gone) > 0 {
		klog.FromContext(ctx).Info("Removed what kcp-operator made and nothing took over", "namespace", namespace, "owner", name, "objects", gone)
		recorder.Eventf(owner, "Normal", "KcpOperatorLeftoversRemoved", "Removed what kcp-operator made and this object replaced: %v", gone)
	}
	return nil
}

// keyEncoding is cert-manager's name of the encoding of a PEM private key, from the PEM
// block's type alone: PKCS1 for RSA's and EC's own forms, PKCS8 for the generic one.
func keyEncoding(keyPEM []byte) (cmv1.PrivateKeyEncoding, bool) {
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return "", false
	}
	switch block.Type {
	case "RSA PRIVATE KEY", "EC PRIVATE KEY":
		return cmv1.PKCS1, true
	case "PRIVATE KEY":
		return cmv1.PKCS8, true
	}
	return "", false
}

// keyOf is the private key algorithm and size of the key a PEM certificate holds the public
// half of, as cert-manager names them.
func keyOf(certPEM []byte) (cmv1.PrivateKeyAlgorithm, int, bool) {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return "", 0, false
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", 0, false
	}
	switch k := cert.PublicKey.(type) {
	case *rsa.PublicKey:
		return cmv1.RSAKeyAlgorithm, k.N.BitLen(), true
	case *ecdsa.PublicKey:
		return cmv1.ECDSAKeyAlgorithm, k.Curve.Params().BitSize, true
	case ed25519.PublicKey:
		return cmv1.Ed25519KeyAlgorithm, 0, true
	}
	return "", 0, false
}
