package cacheserver

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// sync brings the host cluster in line with one CacheServer and reports back in its status.
func (c *Controller) sync(ctx context.Context, key string) error {
	return c.Reconciling(ctx, key, c.reconcile)
}

// reconcile realizes a CacheServer and observes the result.
func (c *Controller) reconcile(ctx context.Context, obj *operatorv1alpha1.CacheServer, status *operatorv1alpha1.CacheServerStatus) error {
	cs := cacheserver.CacheServer{CacheServer: obj}
	wrote, err := c.realize(ctx, cs)
	c.Applied(obj, wrote, err)
	if err != nil {
		return err
	}
	certs := cs.Certificates()
	c.Observe(obj, status, len(certs), c.Host.PendingCertificates(certs), cs.DeploymentName())
	return nil
}

// realize applies the cache server's PKI, its client CA and kubeconfig once cert-manager
// issued what they are made of, its Service, and its Deployment once what it mounts exists.
// It returns how many objects it wrote.
func (c *Controller) realize(ctx context.Context, cs cacheserver.CacheServer) (int, error) {
	objs := cs.PKI()
	wrote, err := c.Host.ApplyCertificates(ctx, objs.Issuers, objs.Certificates)
	if err != nil {
		return wrote, err
	}
	secrets, err := c.secrets(ctx, cs)
	if err != nil {
		return wrote, err
	}
	apply := []func() (bool, error){
		func() (bool, error) { return c.Host.ServiceApplier.ApplyIfChanged(ctx, cs.Service()) },
	}
	for _, secret := range secrets {
		apply = append(apply, func() (bool, error) { return c.Host.SecretApplier.ApplyIfChanged(ctx, secret) })
	}
	for _, a := range apply {
		w, err := a()
		if err != nil {
			return wrote, err
		}
		if w {
			wrote++
		}
	}

	current, err := c.Host.Deployments.Deployments(cs.Namespace).Get(cs.DeploymentName())
	if apierrors.IsNotFound(err) {
		current, err = nil, nil
	}
	if err != nil {
		return wrote, err
	}
	versions := c.Host.MountedVersions(cs.Namespace, append(cs.MountedSecrets(), cs.UsersSecrets()...))
	for _, name := range cs.MountedSecrets() {
		if _, ok := versions[name]; !ok && current == nil {
			return wrote, nil // created once everything it mounts exists
		}
	}
	n, err := c.Host.ApplyWorkload(ctx, cs.Deployment(current, workload.SecretsHash(versions)))
	return wrote + n, err
}

// secrets are the client CA, kubeconfig and reference Secrets, as far as cert-manager has issued what
// they are made of; their events bring the CacheServer back when it has.
func (c *Controller) secrets(ctx context.Context, cs cacheserver.CacheServer) ([]*corev1ac.SecretApplyConfiguration, error) {
	caCert, err := c.caCertificate(ctx, cs)
	if err != nil || caCert == nil {
		return nil, err
	}
	out := []*corev1ac.SecretApplyConfiguration{cs.ClientCA(caCert)}
	client, err := c.Host.Secrets.Secrets(cs.Namespace).Get(cs.ClientName())
	if apierrors.IsNotFound(err) || (err == nil && (len(client.Data["tls.crt"]) == 0 || len(client.Data["tls.key"]) == 0)) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	kubeconfig, err := cs.Kubeconfig(caCert, client.Data["tls.crt"], client.Data["tls.key"])
	if err != nil {
		return nil, err
	}
	// Its reference Secret: the same credentials, for a root shard or shard elsewhere.
	return append(out, kubeconfig, reference.ForCacheServer(cs, caCert, reference.FromSecret(client))), nil
}

// caCertificate is the cache server's CA certificate alone, or nil before it is issued.
func (c *Controller) caCertificate(ctx context.Context, cs cacheserver.CacheServer) ([]byte, error) {
	name := cs.CASecret()
	s, err := c.Host.Secrets.Secrets(cs.Namespace).Get(name)
	if apierrors.IsNotFound(err) && name != cs.CAName() {
		// The user's CA Secret is not labelled as ours, so it is read, not cached.
		s, err = c.Host.Kube.CoreV1().Secrets(cs.Namespace).Get(ctx, name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) || (err == nil && len(s.Data["tls.crt"]) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	first, err := pki.FirstCertificate(s.Data["tls.crt"])
	if err != nil {
		return nil, fmt.Errorf("reading the CA Secret %s: %w", name, err)
	}
	return first, nil
}
