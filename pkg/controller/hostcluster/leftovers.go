package hostcluster

import (
	"context"
	"fmt"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// leftoverType is one type of object kcp-operator makes: how its objects are listed and
// deleted, which of them stay, and what goes with one.
type leftoverType struct {
	kind string
	list func(ctx context.Context, namespace string, opts metav1.ListOptions) ([]metav1.Object, error)
	del  func(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error
	// keep, when set, reports whether an object stays.
	keep func(metav1.Object) bool
	// issued, when set, is what goes with an object, of the type secrets (a Certificate's
	// Secret), or nil.
	issued func(ctx context.Context, namespace string, o metav1.Object) (metav1.Object, error)
}

// namespaced are a typed client's list and delete in a namespace.
type namespaced[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// leftoversOf is the type kind whose objects in a namespace in(namespace) lists and deletes.
func leftoversOf[L runtime.Object, C namespaced[L]](kind string, in func(namespace string) C) leftoverType {
	return leftoverType{kind: kind,
		list: func(ctx context.Context, ns string, o metav1.ListOptions) ([]metav1.Object, error) {
			return items(in(ns).List(ctx, o))
		},
		del: func(ctx context.Context, ns, name string, o metav1.DeleteOptions) error {
			return in(ns).Delete(ctx, name, o)
		},
	}
}

// leftoverTypes are the types of what kcp-operator makes, in the order its leftovers go, and
// the type of its Secrets, which go with its Certificates.
func (h *Host) leftoverTypes() (types []leftoverType, secrets leftoverType) {
	secrets = leftoversOf[*corev1.SecretList]("Secret", h.Kube.CoreV1().Secrets)
	certificates := leftoversOf[*cmv1.CertificateList]("Certificate", h.CertManager.CertmanagerV1().Certificates)
	// A CA is never deleted: its key may still sign what someone holds.
	certificates.keep = func(o metav1.Object) bool { return o.(*cmv1.Certificate).Spec.IsCA }
	certificates.issued = h.issuedSecret
	issuers := leftoversOf[*cmv1.IssuerList]("Issuer", h.CertManager.CertmanagerV1().Issuers)
	// The CA's Issuer goes with the CA, which stays.
	issuers.keep = func(o metav1.Object) bool { return o.(*cmv1.Issuer).Spec.CA != nil }
	return []leftoverType{
		leftoversOf[*appsv1.DeploymentList]("Deployment", h.Kube.AppsV1().Deployments),
		leftoversOf[*corev1.ServiceList]("Service", h.Kube.CoreV1().Services),
		leftoversOf[*corev1.ConfigMapList]("ConfigMap", h.Kube.CoreV1().ConfigMaps),
		certificates,
		secrets,
		issuers,
	}, secrets
}

// issuedSecret is the Secret cert-manager issued kcp-operator's Certificate o into, unless
// it is gone or someone else's by now (ours, or another Certificate's).
func (h *Host) issuedSecret(ctx context.Context, namespace string, o metav1.Object) (metav1.Object, error) {
	c := o.(*cmv1.Certificate)
	s, err := h.Kube.CoreV1().Secrets(namespace).Get(ctx, c.Spec.SecretName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if s.Labels[pki.LabelManagedBy] == pki.ManagedBy || s.Annotations[annotationCertificateName] != c.Name {
		return nil, nil
	}
	return s, nil
}

// items are the objects of a list, or its error alone.
func items(list runtime.Object, err error) ([]metav1.Object, error) {
	if err != nil {
		return nil, err
	}
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]metav1.Object, 0, len(objs))
	for _, o := range objs {
		m, err := meta.Accessor(o)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// RemoveKcpOperatorLeftovers deletes, once an adopting object is realized (once per owner
// and process: a later reconcile lists nothing), what kcp-operator made for it that the
// controllers did not take over (they write their own labels on what they take over): its
// Deployments, Services, ConfigMaps, Secrets, Issuers, and its leaf Certificates with their
// Secrets (leftoverTypes). A CA is never deleted: its key may still sign what someone holds.
// Each deletion is held to the UID read, and an Event says what went.
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
	var gone []string
	// remove deletes o of type t as it was read: a NotFound or a changed UID (Conflict)
	// means it is gone or someone else's by now.
	remove := func(t leftoverType, o metav1.Object) error {
		uid, background := o.GetUID(), metav1.DeletePropagationBackground
		err := t.del(ctx, namespace, o.GetName(),
			metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &background})
		switch {
		case err == nil:
			gone = append(gone, t.kind+" "+o.GetName())
		case !apierrors.IsNotFound(err) && !apierrors.IsConflict(err):
			return fmt.Errorf("deleting kcp-operator's %s %s/%s: %w", t.kind, namespace, o.GetName(), err)
		}
		return nil
	}
	types, secrets := h.leftoverTypes()
	for _, t := range types {
		objs, err := t.list(ctx, namespace, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		for _, o := range objs {
			if t.keep != nil && t.keep(o) {
				continue
			}
			if err := remove(t, o); err != nil {
				return err
			}
			if t.issued == nil {
				continue
			}
			issued, err := t.issued(ctx, namespace, o)
			if err != nil {
				return err
			}
			if issued != nil {
				if err := remove(secrets, issued); err != nil {
					return err
				}
			}
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
