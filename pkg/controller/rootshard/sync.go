package rootshard

import (
	"context"
	"encoding/pem"
	"fmt"
	"slices"

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

// realize applies everything a RootShard needs, in the order it depends on: the PKI, the CA
// bundles, then the kcp server's kubeconfigs, Service and Deployment. It returns how many
// objects it wrote.
func (c *Controller) realize(ctx context.Context, rs *operatorv1alpha1.RootShard, desired rootshard.PKI) (int, error) {
	wrote, err := c.host.ApplyCertificates(ctx, desired.Issuers, desired.Certificates)
	if err != nil {
		return wrote, err
	}
	bundles, issued, err := c.caBundles(ctx, rs)
	if err != nil {
		return wrote, err
	}
	// Until cert-manager issued the CAs, the bundles would be empty; the CA Secrets' events
	// bring the RootShard back.
	if issued {
		for _, secret := range []*corev1ac.SecretApplyConfiguration{rootshard.MergedClientCA(rs, bundles), rootshard.MergedCABundle(rs, bundles)} {
			w, err := c.host.SecretApplier.ApplyIfChanged(ctx, secret)
			if err != nil {
				return wrote, err
			}
			if w {
				wrote++
			}
		}
	}
	w, err := c.host.RealizeShard(ctx, rootshard.Shard(rs))
	return wrote + w, err
}

// caBundles reads the CA certificates the merged bundles are made of. issued is false until
// cert-manager has issued the RootShard's CAs.
func (c *Controller) caBundles(ctx context.Context, rs *operatorv1alpha1.RootShard) (rootshard.CABundles, bool, error) {
	var b rootshard.CABundles
	for ca, dst := range map[pki.CA]*[]byte{pki.ServerCA: &b.ServerCA, pki.ClientCA: &b.ClientCA, pki.FrontProxyClientCA: &b.FrontProxyClientCA} {
		s, err := c.host.Secrets.Secrets(rs.Namespace).Get(pki.CAName(rs.Name, ca))
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
		s, err := c.host.Kube.CoreV1().Secrets(rs.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return b, false, fmt.Errorf("reading the CA bundle Secret %s: %w", ref.Name, err)
		}
		*dst = s.Data["tls.crt"]
	}
	return b, true, nil
}

// firstCertificate returns the first PEM certificate of a chain.
func firstCertificate(chain []byte) ([]byte, error) {
	block, _ := pem.Decode(chain)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("no PEM certificate")
	}
	return pem.EncodeToMemory(block), nil
}
