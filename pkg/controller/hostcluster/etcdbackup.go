package hostcluster

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// EtcdBackupAgent applies a managed etcd's backup agent when its spec asks for a backup: the
// volume store's claim (created once, never changed, never owned: the snapshots outlive
// their owner), the S3 store's CA bundle, the agent's Service, and its Deployment once the
// Secrets it mounts exist. Without a backup, the agent's Deployment, Service, CA bundle and
// certificate that carry the owner's UID are deleted; the claim stays. Without
// --etcd-agent-image nothing is applied, and it answers false (EtcdBackupReady says so).
func (w *Writes) EtcdBackupAgent(e *etcd.Cluster) bool {
	if e == nil || w.err != nil {
		return true
	}
	if e.Backup() == nil {
		w.deleteUnwanted(e, true)
		return true
	}
	if w.host.EtcdAgentImage == "" {
		return false
	}
	e.AgentImage = w.host.EtcdAgentImage
	if claim := e.SnapshotClaim(); claim != nil {
		w.snapshotClaim(e, claim)
	}
	if cm := e.S3CABundle(); cm != nil {
		w.ConfigMap(cm, nil)
	} else {
		w.deleteUnwanted(e, false)
	}
	w.Services(e.AgentService())
	w.DeploymentWhenMounted(e.Namespace, e.AgentName(), e.AgentMounts(),
		func(_ *appsv1.Deployment, secretsHash string) *appsv1ac.DeploymentApplyConfiguration {
			return e.AgentDeployment(w.host.EtcdAgentImage, secretsHash)
		})
	return true
}

// snapshotClaim creates the volume store's claim once; a plan records it as created when it
// does not exist. Another's claim of that name (another owner UID) is refused.
func (w *Writes) snapshotClaim(e *etcd.Cluster, claim *corev1ac.PersistentVolumeClaimApplyConfiguration) {
	claims := w.host.Kube.CoreV1().PersistentVolumeClaims(e.Namespace)
	existing, err := claims.Get(w.ctx, *claim.Name, metav1.GetOptions{})
	switch {
	case err == nil:
		// Another's claim of that name is not the owner's store: the agent would write into
		// it, so it is refused rather than used.
		if uid := existing.Labels[pki.LabelOwnerUID]; e.OwnerUID != "" && uid != string(e.OwnerUID) {
			w.err = fmt.Errorf("the snapshot claim %s/%s exists and is not this %s's (owner UID %q)", e.Namespace, *claim.Name, e.Kind, uid)
		}
		return
	case !apierrors.IsNotFound(err):
		w.err = err
		return
	}
	if w.plan != nil {
		w.plan.claim(claim)
		return
	}
	// A create, not an apply: the claim is never changed afterwards, and the server's rights
	// on claims are create, get and delete alone.
	var obj corev1.PersistentVolumeClaim
	data, err := json.Marshal(claim)
	if err == nil {
		err = json.Unmarshal(data, &obj)
	}
	if err != nil {
		w.err = fmt.Errorf("the snapshot claim %s/%s: %w", e.Namespace, *claim.Name, err)
		return
	}
	_, err = claims.Create(w.ctx, &obj, metav1.CreateOptions{FieldManager: FieldManager})
	observeWrite("PersistentVolumeClaim", err)
	created := err == nil
	if apierrors.IsAlreadyExists(err) {
		// Created since it was read: the next reconcile judges whose it is.
		err = nil
	}
	w.apply(created, err)
}

// deleteUnwanted deletes the S3 store's CA bundle of e, and with agent the agent's
// Deployment, Service, Certificate and Secret too: what a spec without that part no longer
// asks for. Each is read from the caches and deleted only when it carries the owner's UID
// (an object from before the mark, or another's, stays), with its UID as a precondition. A
// plan deletes nothing.
func (w *Writes) deleteUnwanted(e *etcd.Cluster, agent bool) {
	if w.err != nil || w.plan != nil {
		return
	}
	owner, ok := OwnerFrom(w.ctx)
	if !ok {
		return
	}
	ns, name := e.Namespace, e.AgentName()
	kube, certs := w.host.Kube.CoreV1(), w.host.CertManager.CertmanagerV1()
	cm, err := w.host.ConfigMaps.ConfigMaps(ns).Get(e.S3CABundleName())
	w.deleteOwned(owner, "ConfigMap", ns, e.S3CABundleName(), cm, err, kube.ConfigMaps(ns).Delete)
	if !agent {
		return
	}
	d, err := w.host.Deployments.Deployments(ns).Get(name)
	w.deleteOwned(owner, "Deployment", ns, name, d, err, func(ctx context.Context, name string, opts metav1.DeleteOptions) error {
		background := metav1.DeletePropagationBackground
		opts.PropagationPolicy = &background
		return w.host.Kube.AppsV1().Deployments(ns).Delete(ctx, name, opts)
	})
	svc, err := w.host.Services.Services(ns).Get(name)
	w.deleteOwned(owner, "Service", ns, name, svc, err, kube.Services(ns).Delete)
	// The Certificate before its Secret, so that cert-manager does not issue it again.
	cert, err := w.host.Certificates.Certificates(ns).Get(name)
	w.deleteOwned(owner, "Certificate", ns, name, cert, err, certs.Certificates(ns).Delete)
	secret, err := w.host.Secrets.Secrets(ns).Get(name)
	w.deleteOwned(owner, "Secret", ns, name, secret, err, kube.Secrets(ns).Delete)
}

// deleteOwned deletes o, the object ns/name of kind as the cache read it (with err), when it
// carries owner's labels and UID, with that UID as a precondition.
func (w *Writes) deleteOwned(owner Owner, kind, ns, name string, o metav1.Object, err error,
	del func(ctx context.Context, name string, opts metav1.DeleteOptions) error) {
	if w.err != nil || apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		w.err = err
		return
	}
	if !carriesOwner(o, owner) {
		return
	}
	uid := o.GetUID()
	err = del(w.ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	observeWrite(kind, err)
	switch {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		// Gone, or replaced since it was read: not judged here.
	case err != nil:
		w.err = fmt.Errorf("deleting %s %s/%s: %w", kind, ns, name, err)
	default:
		w.wrote++
		klog.FromContext(w.ctx).V(2).Info("Deleted: nothing asks for it any longer", "kind", kind, "object", klog.KRef(ns, name))
	}
}

// carriesOwner reports whether o is owner's by its labels: its owner label and its UID.
func carriesOwner(o metav1.Object, owner Owner) bool {
	l := o.GetLabels()
	return l[pki.OwnerLabel(owner.Kind)] == owner.Name && l[pki.LabelOwnerUID] == string(owner.UID)
}
