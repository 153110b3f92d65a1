package cacheserver

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// sync brings the host cluster in line with one CacheServer and reports back in its status.
func (c *Controller) sync(ctx context.Context, key string) error {
	l := c.lifecycle()
	return l.Sync(ctx, key, l.RequiringCertManager(c.reconcile))
}

// lifecycle is the CacheServer's finalizer, status and deletion. The namespace bootstrap PKI
// goes with the last object that uses it.
func (c *Controller) lifecycle() controller.Lifecycle[*operatorv1alpha1.CacheServer, operatorv1alpha1.CacheServerStatus] {
	opts := metav1.UpdateOptions{FieldManager: controller.FieldManager}
	return controller.Lifecycle[*operatorv1alpha1.CacheServer, operatorv1alpha1.CacheServerStatus]{
		Kind: cacheserver.Kind, Noun: "cache server", Finalizer: Finalizer,
		Get: func(ns, name string) (*operatorv1alpha1.CacheServer, error) {
			return c.cacheServers.CacheServers(ns).Get(name)
		},
		Update: func(ctx context.Context, cs *operatorv1alpha1.CacheServer) (*operatorv1alpha1.CacheServer, error) {
			return c.client.OperatorV1alpha1().CacheServers(cs.Namespace).Update(ctx, cs, opts)
		},
		UpdateStatus: func(ctx context.Context, cs *operatorv1alpha1.CacheServer) (*operatorv1alpha1.CacheServer, error) {
			return c.client.OperatorV1alpha1().CacheServers(cs.Namespace).UpdateStatus(ctx, cs, opts)
		},
		Status: func(cs *operatorv1alpha1.CacheServer) *operatorv1alpha1.CacheServerStatus { return &cs.Status },
		Common: func(s *operatorv1alpha1.CacheServerStatus) controller.Common {
			return controller.Common{Phase: &s.Phase, ObservedGeneration: &s.ObservedGeneration, Conditions: &s.Conditions}
		},
		Cleanup: func(ctx context.Context, cs *operatorv1alpha1.CacheServer) error {
			if cs.Spec.Certificates != nil {
				return nil
			}
			b := controller.Bootstrap{Host: c.host, Indexes: c.indexes}
			return b.Release(ctx, cs.Namespace, cacheserver.Kind, cs.Name)
		},
		Host: c.host, Recorder: c.recorder,
	}
}

// reconcile realizes a CacheServer and observes the result.
func (c *Controller) reconcile(ctx context.Context, obj *operatorv1alpha1.CacheServer, status *operatorv1alpha1.CacheServerStatus) error {
	l := c.lifecycle()
	cs := cacheserver.CacheServer{CacheServer: obj}
	wrote, err := c.realize(ctx, cs)
	l.Applied(obj, wrote, err)
	if err != nil {
		return err
	}
	certs := cs.Certificates()
	l.Observe(obj, status, len(certs), c.host.PendingCertificates(certs), cs.DeploymentName())
	return c.advanceRotations(ctx, cs, status, wrote) // rotation (docs/rotation.md)
}

// realize applies the cache server's PKI, its client CA and kubeconfig once cert-manager
// issued what they are made of, its Service, and its Deployment once what it mounts exists.
// It returns how many objects it wrote.
func (c *Controller) realize(ctx context.Context, cs cacheserver.CacheServer) (int, error) {
	objs := cs.PKI()
	wrote, err := c.host.ApplyCertificates(ctx, objs.Issuers, objs.Certificates)
	if err != nil {
		return wrote, err
	}
	secrets, err := c.secrets(ctx, cs)
	if err != nil {
		return wrote, err
	}
	apply := []func() (bool, error){
		func() (bool, error) { return c.host.ServiceApplier.ApplyIfChanged(ctx, cs.Service()) },
	}
	for _, secret := range secrets {
		apply = append(apply, func() (bool, error) { return c.host.SecretApplier.ApplyIfChanged(ctx, secret) })
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

	current, err := c.host.Deployments.Deployments(cs.Namespace).Get(cs.DeploymentName())
	if apierrors.IsNotFound(err) {
		current, err = nil, nil
	}
	if err != nil {
		return wrote, err
	}
	versions := c.host.MountedVersions(cs.Namespace, append(cs.MountedSecrets(), cs.UsersSecrets()...))
	for _, name := range cs.MountedSecrets() {
		if _, ok := versions[name]; !ok && current == nil {
			return wrote, nil // created once everything it mounts exists
		}
	}
	n, err := c.host.ApplyWorkload(ctx, cs.Deployment(current, workload.SecretsHash(versions)))
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
	client, err := c.host.Secrets.Secrets(cs.Namespace).Get(cs.ClientName())
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
	if name == cs.CAName() {
		// Every live slot: both CAs while one rotates (docs/rotation.md).
		return c.liveCA(cs)
	}
	s, err := c.host.Secrets.Secrets(cs.Namespace).Get(name)
	if apierrors.IsNotFound(err) && name != cs.CAName() {
		// The user's CA Secret is not labelled as ours, so it is read, not cached.
		s, err = c.host.Kube.CoreV1().Secrets(cs.Namespace).Get(ctx, name, metav1.GetOptions{})
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
