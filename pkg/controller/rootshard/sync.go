package rootshard

import (
	"context"
	"fmt"
	"slices"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

var everything = labels.Everything()

// sync brings the host cluster in line with one RootShard and reports back in its status.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil // not a key of ours; nothing will ever make it one
	}
	rs, err := c.rootShards.RootShards(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if rs.DeletionTimestamp != nil {
		return c.finalize(ctx, rs)
	}
	if !slices.Contains(rs.Finalizers, Finalizer) {
		// The update brings the object back through the informer.
		rs = rs.DeepCopy()
		rs.Finalizers = append(rs.Finalizers, Finalizer)
		_, err := c.client.OperatorV1alpha1().RootShards(namespace).Update(ctx, rs, metav1.UpdateOptions{FieldManager: controller.FieldManager})
		return err
	}

	desired := rootshard.BuildPKI(rs)
	for _, issuer := range desired.Issuers {
		if err := c.applyIssuer(ctx, rs, issuer); err != nil {
			return err
		}
	}
	for _, cert := range desired.Certificates {
		if err := c.applyCertificate(ctx, rs, cert); err != nil {
			return err
		}
	}
	return c.updateStatus(ctx, rs, c.observe(rs, desired))
}

// applyIssuer applies an Issuer unless it is already as desired.
func (c *Controller) applyIssuer(ctx context.Context, rs *operatorv1alpha1.RootShard, desired *cmapply.IssuerApplyConfiguration) error {
	hash, err := controller.DesiredHash(desired)
	if err != nil {
		return err
	}
	existing, err := c.issuers.Issuers(*desired.Namespace).Get(*desired.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err == nil && controller.UpToDate(existing, hash) {
		return nil
	}
	desired.WithAnnotations(map[string]string{controller.DesiredHashAnnotation: hash})
	if _, err := c.certManager.CertmanagerV1().Issuers(*desired.Namespace).Apply(ctx, desired, controller.ApplyOptions); err != nil {
		return fmt.Errorf("applying Issuer %s: %w", *desired.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Applied Issuer", "issuer", *desired.Name)
	c.recorder.Eventf(rs, "Normal", "IssuerApplied", "Applied Issuer %s", *desired.Name)
	return nil
}

// applyCertificate applies a Certificate unless it is already as desired.
func (c *Controller) applyCertificate(ctx context.Context, rs *operatorv1alpha1.RootShard, desired *cmapply.CertificateApplyConfiguration) error {
	hash, err := controller.DesiredHash(desired)
	if err != nil {
		return err
	}
	existing, err := c.certificates.Certificates(*desired.Namespace).Get(*desired.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err == nil && controller.UpToDate(existing, hash) {
		return nil
	}
	desired.WithAnnotations(map[string]string{controller.DesiredHashAnnotation: hash})
	if _, err := c.certManager.CertmanagerV1().Certificates(*desired.Namespace).Apply(ctx, desired, controller.ApplyOptions); err != nil {
		return fmt.Errorf("applying Certificate %s: %w", *desired.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Applied Certificate", "certificate", *desired.Name)
	c.recorder.Eventf(rs, "Normal", "CertificateApplied", "Applied Certificate %s", *desired.Name)
	return nil
}

// certificateReady reports whether a Certificate has been issued and is current.
func certificateReady(cert *cmv1.Certificate) bool {
	for _, cond := range cert.Status.Conditions {
		if cond.Type == cmv1.CertificateConditionReady {
			return cond.Status == "True"
		}
	}
	return false
}
