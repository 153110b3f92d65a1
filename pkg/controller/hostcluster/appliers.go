package hostcluster

import (
	"context"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	policyv1listers "k8s.io/client-go/listers/policy/v1"
)

// The appliers of the host's objects, one for each type the controllers write. What they
// share, an apply configuration's key and marks, is newApplier's; each says how its objects
// are read (the claim client, the cache) and applied.

// applyConfiguration is what every apply configuration A has: its namespace and name, and
// labels and annotations to add.
type applyConfiguration[A any] interface {
	GetNamespace() *string
	GetName() *string
	WithLabels(map[string]string) A
	WithAnnotations(map[string]string) A
}

// newApplier is the applier of kind's objects, applied as A: labels reads a desired object's
// labels, lookup reads an object from the host cluster itself, get from the cache, and apply
// applies one server-side.
func newApplier[A applyConfiguration[A]](kind string, labels func(A) map[string]string,
	lookup func(ctx context.Context, namespace, name string) (metav1.Object, error),
	get func(namespace, name string) (metav1.Object, error), apply func(ctx context.Context, desired A) (metav1.Object, error)) Applied[A] {
	return Applied[A]{Kind: kind, Labels: labels, Lookup: lookup, Get: get, Apply: apply,
		Key:      func(o A) (string, string) { return *o.GetNamespace(), *o.GetName() },
		Annotate: func(o A, a map[string]string) { o.WithAnnotations(a) },
		Mark:     func(o A, l map[string]string) { o.WithLabels(l) },
	}
}

// WithStatefulSets gives the host its cache of StatefulSets (the managed etcd clusters), and
// their applier; someone else's change to one is undone, as for Deployments.
func (c *Host) WithStatefulSets(lister appsv1listers.StatefulSetLister) *Host {
	c.StatefulSets = lister
	c.StatefulSetApplier = c.statefulSetApplier().WithDriftDetection()
	return c
}

// WithDisruptionBudgets gives the host its cache of PodDisruptionBudgets, and their applier.
func (c *Host) WithDisruptionBudgets(lister policyv1listers.PodDisruptionBudgetLister) *Host {
	c.DisruptionBudgets = lister
	c.DisruptionBudgetApplier = c.disruptionBudgetApplier().WithDriftDetection()
	return c
}

func (c *Host) issuerApplier() Applied[*cmapply.IssuerApplyConfiguration] {
	return newApplier("Issuer", func(o *cmapply.IssuerApplyConfiguration) map[string]string { return o.Labels },
		func(ctx context.Context, ns, name string) (metav1.Object, error) {
			list, err := c.claimCertManager().CertmanagerV1().Issuers(ns).List(ctx, byName(name))
			return listed(name, list, err)
		},
		func(ns, name string) (metav1.Object, error) { return c.Issuers.Issuers(ns).Get(name) },
		func(ctx context.Context, o *cmapply.IssuerApplyConfiguration) (metav1.Object, error) {
			return applied(c.CertManager.CertmanagerV1().Issuers(*o.Namespace).Apply(ctx, o, ApplyOptions))
		})
}

// certificateApplier marks a Certificate's secretTemplate too: cert-manager copies it onto
// the Secret it writes.
func (c *Host) certificateApplier() Applied[*cmapply.CertificateApplyConfiguration] {
	a := newApplier("Certificate", func(o *cmapply.CertificateApplyConfiguration) map[string]string { return o.Labels },
		func(ctx context.Context, ns, name string) (metav1.Object, error) {
			list, err := c.claimCertManager().CertmanagerV1().Certificates(ns).List(ctx, byName(name))
			return listed(name, list, err)
		},
		func(ns, name string) (metav1.Object, error) { return c.Certificates.Certificates(ns).Get(name) },
		func(ctx context.Context, o *cmapply.CertificateApplyConfiguration) (metav1.Object, error) {
			return applied(c.CertManager.CertmanagerV1().Certificates(*o.Namespace).Apply(ctx, o, ApplyOptions))
		})
	a.Mark = func(o *cmapply.CertificateApplyConfiguration, l map[string]string) {
		o.WithLabels(l)
		if o.Spec != nil && o.Spec.SecretTemplate != nil {
			o.Spec.SecretTemplate.WithLabels(l)
		}
	}
	return a
}

// secretApplier looks a Secret up by a get: the claim client of Secrets may get, not list.
func (c *Host) secretApplier() Applied[*corev1ac.SecretApplyConfiguration] {
	return newApplier("Secret", func(o *corev1ac.SecretApplyConfiguration) map[string]string { return o.Labels },
		func(ctx context.Context, ns, name string) (metav1.Object, error) {
			return gotten(c.claimKube().CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{}))
		},
		func(ns, name string) (metav1.Object, error) { return c.Secrets.Secrets(ns).Get(name) },
		func(ctx context.Context, o *corev1ac.SecretApplyConfiguration) (metav1.Object, error) {
			return applied(c.Kube.CoreV1().Secrets(*o.Namespace).Apply(ctx, o, ApplyOptions))
		})
}

func (c *Host) serviceApplier() Applied[*corev1ac.ServiceApplyConfiguration] {
	return newApplier("Service", func(o *corev1ac.ServiceApplyConfiguration) map[string]string { return o.Labels },
		func(ctx context.Context, ns, name string) (metav1.Object, error) {
			list, err := c.claimKube().CoreV1().Services(ns).List(ctx, byName(name))
			return listed(name, list, err)
		},
		func(ns, name string) (metav1.Object, error) { return c.Services.Services(ns).Get(name) },
		func(ctx context.Context, o *corev1ac.ServiceApplyConfiguration) (metav1.Object, error) {
			return applied(c.Kube.CoreV1().Services(*o.Namespace).Apply(ctx, o, ApplyOptions))
		})
}

func (c *Host) deploymentApplier() Applied[*appsv1ac.DeploymentApplyConfiguration] {
	return newApplier("Deployment", func(o *appsv1ac.DeploymentApplyConfiguration) map[string]string { return o.Labels },
		func(ctx context.Context, ns, name string) (metav1.Object, error) {
			list, err := c.claimKube().AppsV1().Deployments(ns).List(ctx, byName(name))
			return listed(name, list, err)
		},
		func(ns, name string) (metav1.Object, error) { return c.Deployments.Deployments(ns).Get(name) },
		func(ctx context.Context, o *appsv1ac.DeploymentApplyConfiguration) (metav1.Object, error) {
			return applied(c.Kube.AppsV1().Deployments(*o.Namespace).Apply(ctx, o, ApplyOptions))
		})
}

func (c *Host) configMapApplier() Applied[*corev1ac.ConfigMapApplyConfiguration] {
	return newApplier("ConfigMap", func(o *corev1ac.ConfigMapApplyConfiguration) map[string]string { return o.Labels },
		func(ctx context.Context, ns, name string) (metav1.Object, error) {
			list, err := c.claimKube().CoreV1().ConfigMaps(ns).List(ctx, byName(name))
			return listed(name, list, err)
		},
		func(ns, name string) (metav1.Object, error) { return c.ConfigMaps.ConfigMaps(ns).Get(name) },
		func(ctx context.Context, o *corev1ac.ConfigMapApplyConfiguration) (metav1.Object, error) {
			return applied(c.Kube.CoreV1().ConfigMaps(*o.Namespace).Apply(ctx, o, ApplyOptions))
		})
}

func (c *Host) statefulSetApplier() Applied[*appsv1ac.StatefulSetApplyConfiguration] {
	return newApplier("StatefulSet", func(o *appsv1ac.StatefulSetApplyConfiguration) map[string]string { return o.Labels },
		func(ctx context.Context, ns, name string) (metav1.Object, error) {
			list, err := c.claimKube().AppsV1().StatefulSets(ns).List(ctx, byName(name))
			return listed(name, list, err)
		},
		func(ns, name string) (metav1.Object, error) { return c.StatefulSets.StatefulSets(ns).Get(name) },
		func(ctx context.Context, o *appsv1ac.StatefulSetApplyConfiguration) (metav1.Object, error) {
			return applied(c.Kube.AppsV1().StatefulSets(*o.Namespace).Apply(ctx, o, ApplyOptions))
		})
}

func (c *Host) disruptionBudgetApplier() Applied[*policyv1ac.PodDisruptionBudgetApplyConfiguration] {
	return newApplier("PodDisruptionBudget", func(o *policyv1ac.PodDisruptionBudgetApplyConfiguration) map[string]string { return o.Labels },
		func(ctx context.Context, ns, name string) (metav1.Object, error) {
			list, err := c.claimKube().PolicyV1().PodDisruptionBudgets(ns).List(ctx, byName(name))
			return listed(name, list, err)
		},
		func(ns, name string) (metav1.Object, error) {
			return c.DisruptionBudgets.PodDisruptionBudgets(ns).Get(name)
		},
		func(ctx context.Context, o *policyv1ac.PodDisruptionBudgetApplyConfiguration) (metav1.Object, error) {
			return applied(c.Kube.PolicyV1().PodDisruptionBudgets(*o.Namespace).Apply(ctx, o, ApplyOptions))
		})
}
