package frontproxy

import (
	"context"
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// sync brings the host cluster in line with one FrontProxy and reports back in its status.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil // not a key of ours; nothing will ever make it one
	}
	fp, err := c.frontProxies.FrontProxies(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if fp.DeletionTimestamp != nil {
		return c.finalize(ctx, fp)
	}
	if !slices.Contains(fp.Finalizers, Finalizer) {
		fp = fp.DeepCopy()
		fp.Finalizers = append(fp.Finalizers, Finalizer)
		_, err := c.client.OperatorV1alpha1().FrontProxies(namespace).Update(ctx, fp, metav1.UpdateOptions{FieldManager: controller.FieldManager})
		return err
	}

	status := *fp.Status.DeepCopy()
	status.ObservedGeneration = fp.Generation
	set := func(t string, st metav1.ConditionStatus, reason, message string) {
		controller.SetCondition(&status.Conditions, fp.Generation, t, st, reason, message)
	}
	rsName := ""
	if fp.Spec.RootShard.Reference != nil {
		rsName = fp.Spec.RootShard.Reference.Name
	}
	rs, err := c.rootShards.RootShards(namespace).Get(rsName)
	if apierrors.IsNotFound(err) {
		msg := controller.SetRootShardMissing(&status.Conditions, fp.Generation, namespace, rsName)
		status.Phase = operatorv1alpha1.PhaseProvisioning
		if !apiequality.Semantic.DeepEqual(fp.Status, status) {
			c.recorder.Event(fp, "Warning", controller.ReasonRootShardNotFound, msg)
		}
		return c.updateStatus(ctx, fp, status)
	}
	if err != nil {
		return err
	}

	f := frontproxy.FrontProxy{FrontProxy: fp, RootShard: rs}
	wrote, err := c.realize(ctx, f)
	if err != nil {
		c.recorder.Eventf(fp, "Warning", "ReconcileFailed", "%v", err)
		return err
	}
	if wrote > 0 {
		c.recorder.Eventf(fp, "Normal", "Applied", "Applied %d object(s) to the host cluster", wrote)
	}
	set(operatorv1alpha1.ConditionReferenceValid, metav1.ConditionTrue, controller.ReasonReferencesFound, "every referenced object exists")
	certs := f.Certificates()
	controller.SetCertificatesReady(&status.Conditions, fp.Generation, len(certs), c.host.PendingCertificates(certs))
	available, reason, message := c.host.DeploymentAvailable(namespace, f.DeploymentName())
	set(operatorv1alpha1.ConditionAvailable, available, reason, message)
	status.Phase = controller.Phase(status.Conditions)
	return c.updateStatus(ctx, fp, status)
}

// realize applies the front proxy's certificates, kubeconfig, path mappings, Service and
// Deployment, and returns how many objects it wrote. The Deployment is created once what it
// mounts exists, and rolls when that changes.
func (c *Controller) realize(ctx context.Context, f frontproxy.FrontProxy) (int, error) {
	wrote, err := c.host.ApplyCertificates(ctx, nil, f.Certificates())
	if err != nil {
		return wrote, err
	}
	kubeconfig, err := f.DynamicKubeconfig()
	if err != nil {
		return wrote, err
	}
	config, err := f.ConfigMap()
	if err != nil {
		return wrote, err
	}
	for _, apply := range []func() (bool, error){
		func() (bool, error) { return c.host.SecretApplier.ApplyIfChanged(ctx, kubeconfig) },
		func() (bool, error) { return c.host.ConfigMapApplier.ApplyIfChanged(ctx, config) },
		func() (bool, error) { return c.host.ServiceApplier.ApplyIfChanged(ctx, f.Service()) },
	} {
		w, err := apply()
		if err != nil {
			return wrote, err
		}
		if w {
			wrote++
		}
	}

	current, err := c.host.Deployments.Deployments(f.Namespace).Get(f.DeploymentName())
	if apierrors.IsNotFound(err) {
		current, err = nil, nil
	}
	if err != nil {
		return wrote, err
	}
	versions := map[string]string{}
	for _, name := range f.MountedSecrets() {
		if s, err := c.host.Secrets.Secrets(f.Namespace).Get(name); err == nil {
			versions[name] = s.ResourceVersion
		} else if current == nil {
			return wrote, nil // created once everything it mounts exists
		}
	}
	cm, err := c.host.ConfigMaps.ConfigMaps(f.Namespace).Get(f.ConfigMapName())
	if err != nil {
		if current == nil {
			return wrote, nil
		}
	} else {
		versions["configmap/"+cm.Name] = cm.ResourceVersion
	}
	w, err := c.host.DeploymentApplier.ApplyIfChanged(ctx, f.Deployment(current, workload.SecretsHash(versions)))
	if w {
		wrote++
	}
	return wrote, err
}

// updateStatus writes the status only when it changed.
func (c *Controller) updateStatus(ctx context.Context, fp *operatorv1alpha1.FrontProxy, status operatorv1alpha1.FrontProxyStatus) error {
	if apiequality.Semantic.DeepEqual(fp.Status, status) {
		return nil
	}
	fp = fp.DeepCopy()
	fp.Status = status
	_, err := c.client.OperatorV1alpha1().FrontProxies(fp.Namespace).UpdateStatus(ctx, fp, metav1.UpdateOptions{FieldManager: controller.FieldManager})
	return err
}

// finalize removes everything the controller created for a FrontProxy that is being
// deleted, and only that, then lets it go.
func (c *Controller) finalize(ctx context.Context, fp *operatorv1alpha1.FrontProxy) error {
	if !slices.Contains(fp.Finalizers, Finalizer) {
		return nil
	}
	if fp.Status.Phase != operatorv1alpha1.PhaseDeleting {
		status := *fp.Status.DeepCopy()
		status.Phase = operatorv1alpha1.PhaseDeleting
		controller.SetCondition(&status.Conditions, fp.Generation, operatorv1alpha1.ConditionAvailable, metav1.ConditionFalse,
			controller.ReasonDeleting, "the front proxy is being deleted")
		if err := c.updateStatus(ctx, fp, status); err != nil {
			return err
		}
	}
	owned := controller.OwnedSelector(frontproxy.Kind, fp.Name)
	if err := c.host.DeleteOwned(ctx, fp.Namespace, owned); err != nil {
		return err
	}
	c.recorder.Event(fp, "Normal", "Cleaned", "Deleted the Deployment, Service, ConfigMap, Certificates and Secrets of the front proxy")
	fp = fp.DeepCopy()
	fp.Finalizers = slices.DeleteFunc(fp.Finalizers, func(f string) bool { return f == Finalizer })
	_, err := c.client.OperatorV1alpha1().FrontProxies(fp.Namespace).Update(ctx, fp, metav1.UpdateOptions{FieldManager: controller.FieldManager})
	return err
}
