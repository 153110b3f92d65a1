package rootshard

import (
	"context"
	"encoding/pem"
	"fmt"
	"slices"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
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
	wrote, err := c.realize(ctx, rs, desired)
	if err != nil {
		c.recorder.Eventf(rs, "Warning", "ReconcileFailed", "%v", err)
		return err
	}
	switch {
	case wrote == 1:
		c.recorder.Event(rs, "Normal", "Applied", "Applied 1 object to the host cluster")
	case wrote > 1:
		c.recorder.Eventf(rs, "Normal", "Applied", "Applied %d objects to the host cluster", wrote)
	}
	return c.updateStatus(ctx, rs, c.observe(rs, desired))
}

// realize applies everything a RootShard needs, in the order it depends on: the PKI, the
// kubeconfigs and CA bundles, the Service, the Deployment. It returns how many objects it
// wrote.
func (c *Controller) realize(ctx context.Context, rs *operatorv1alpha1.RootShard, desired rootshard.PKI) (int, error) {
	a := c.appliers
	wrote := 0
	count := func(w bool, err error) error {
		if w {
			wrote++
		}
		return err
	}
	for _, issuer := range desired.Issuers {
		if err := count(a.issuers.ApplyIfChanged(ctx, issuer)); err != nil {
			return wrote, err
		}
	}
	for _, cert := range desired.Certificates {
		if err := count(a.certificates.ApplyIfChanged(ctx, cert)); err != nil {
			return wrote, err
		}
	}
	for _, identity := range []string{rootshard.LogicalClusterAdmin, rootshard.ExternalLogicalClusterAdmin} {
		secret, err := rootshard.AdminKubeconfig(rs, identity)
		if err != nil {
			return wrote, err
		}
		if err := count(a.secrets.ApplyIfChanged(ctx, secret)); err != nil {
			return wrote, err
		}
	}
	bundles, issued, err := c.caBundles(ctx, rs)
	if err != nil {
		return wrote, err
	}
	// Until cert-manager issued the CAs, the bundles would be empty; the CA Secrets' events
	// bring the RootShard back.
	if issued {
		for _, secret := range []*corev1ac.SecretApplyConfiguration{rootshard.MergedClientCA(rs, bundles), rootshard.MergedCABundle(rs, bundles)} {
			if err := count(a.secrets.ApplyIfChanged(ctx, secret)); err != nil {
				return wrote, err
			}
		}
	}
	if err := count(a.services.ApplyIfChanged(ctx, rootshard.Service(rs))); err != nil {
		return wrote, err
	}
	current, err := c.deployments.Deployments(rs.Namespace).Get(rootshard.DeploymentName(rs))
	if err != nil && !apierrors.IsNotFound(err) {
		return wrote, err
	}
	if apierrors.IsNotFound(err) {
		current = nil
	}
	deployment := rootshard.Deployment(rs, current, workload.SecretsHash(c.mountedVersions(rs)))
	return wrote, count(a.deployments.ApplyIfChanged(ctx, deployment))
}

// mountedVersions are the resource versions of the Secrets the root shard's pods mount, as
// far as the controller's cache holds them (it holds what the controller and cert-manager
// wrote for it).
func (c *Controller) mountedVersions(rs *operatorv1alpha1.RootShard) map[string]string {
	versions := map[string]string{}
	for _, name := range rootshard.MountedSecrets(rs) {
		if s, err := c.secrets.Secrets(rs.Namespace).Get(name); err == nil {
			versions[name] = s.ResourceVersion
		}
	}
	return versions
}

// caBundles reads the CA certificates the merged bundles are made of. issued is false until
// cert-manager has issued the RootShard's CAs.
func (c *Controller) caBundles(ctx context.Context, rs *operatorv1alpha1.RootShard) (rootshard.CABundles, bool, error) {
	var b rootshard.CABundles
	for ca, dst := range map[pki.CA]*[]byte{pki.ServerCA: &b.ServerCA, pki.ClientCA: &b.ClientCA, pki.FrontProxyClientCA: &b.FrontProxyClientCA} {
		s, err := c.secrets.Secrets(rs.Namespace).Get(pki.CAName(rs.Name, ca))
		if apierrors.IsNotFound(err) || (err == nil && len(s.Data["tls.crt"]) == 0) {
			return b, false, nil
		}
		if err != nil {
			return b, false, err
		}
		// cert-manager appends the issuing chain to a CA's tls.crt; a bundle that trusted the
		// root too would keep accepting credentials of a rotated intermediate.
		first, err := firstCertificate(s.Data["tls.crt"])
		if err != nil {
			return b, false, fmt.Errorf("reading the CA Secret %s: %w", s.Name, err)
		}
		*dst = first
	}
	// The users' extra CAs are not labelled as ours, so they are read, not cached.
	for ref, dst := range map[*corev1.LocalObjectReference]*[]byte{rs.Spec.CABundleSecretRef: &b.ExtraServerCAs, rs.Spec.ClientCABundleRef: &b.ExtraClientCAs} {
		if ref == nil {
			continue
		}
		s, err := c.kube.CoreV1().Secrets(rs.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return b, false, fmt.Errorf("reading the CA bundle Secret %s: %w", ref.Name, err)
		}
		*dst = s.Data["tls.crt"]
	}
	return b, true, nil
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

// firstCertificate returns the first PEM certificate of a chain.
func firstCertificate(chain []byte) ([]byte, error) {
	block, _ := pem.Decode(chain)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("no PEM certificate")
	}
	return pem.EncodeToMemory(block), nil
}
