package rootshard

import (
	"context"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kcp-setups/apiserver/pkg/controller"
)

// appliers write the host objects of a RootShard, each only when it changed.
type appliers struct {
	issuers      controller.Applied[*cmapply.IssuerApplyConfiguration]
	certificates controller.Applied[*cmapply.CertificateApplyConfiguration]
	secrets      controller.Applied[*corev1ac.SecretApplyConfiguration]
	services     controller.Applied[*corev1ac.ServiceApplyConfiguration]
	deployments  controller.Applied[*appsv1ac.DeploymentApplyConfiguration]
}

func (c *Controller) newAppliers() appliers {
	return appliers{
		issuers: controller.Applied[*cmapply.IssuerApplyConfiguration]{
			Kind:     "Issuer",
			Key:      func(o *cmapply.IssuerApplyConfiguration) (string, string) { return *o.Namespace, *o.Name },
			Annotate: func(o *cmapply.IssuerApplyConfiguration, a map[string]string) { o.WithAnnotations(a) },
			Get:      func(ns, name string) (metav1.Object, error) { return c.issuers.Issuers(ns).Get(name) },
			Apply: func(ctx context.Context, o *cmapply.IssuerApplyConfiguration) error {
				_, err := c.certManager.CertmanagerV1().Issuers(*o.Namespace).Apply(ctx, o, controller.ApplyOptions)
				return err
			},
		},
		certificates: controller.Applied[*cmapply.CertificateApplyConfiguration]{
			Kind:     "Certificate",
			Key:      func(o *cmapply.CertificateApplyConfiguration) (string, string) { return *o.Namespace, *o.Name },
			Annotate: func(o *cmapply.CertificateApplyConfiguration, a map[string]string) { o.WithAnnotations(a) },
			Get:      func(ns, name string) (metav1.Object, error) { return c.certificates.Certificates(ns).Get(name) },
			Apply: func(ctx context.Context, o *cmapply.CertificateApplyConfiguration) error {
				_, err := c.certManager.CertmanagerV1().Certificates(*o.Namespace).Apply(ctx, o, controller.ApplyOptions)
				return err
			},
		},
		secrets: controller.Applied[*corev1ac.SecretApplyConfiguration]{
			Kind:     "Secret",
			Key:      func(o *corev1ac.SecretApplyConfiguration) (string, string) { return *o.Namespace, *o.Name },
			Annotate: func(o *corev1ac.SecretApplyConfiguration, a map[string]string) { o.WithAnnotations(a) },
			Get:      func(ns, name string) (metav1.Object, error) { return c.secrets.Secrets(ns).Get(name) },
			Apply: func(ctx context.Context, o *corev1ac.SecretApplyConfiguration) error {
				_, err := c.kube.CoreV1().Secrets(*o.Namespace).Apply(ctx, o, controller.ApplyOptions)
				return err
			},
		},
		services: controller.Applied[*corev1ac.ServiceApplyConfiguration]{
			Kind:     "Service",
			Key:      func(o *corev1ac.ServiceApplyConfiguration) (string, string) { return *o.Namespace, *o.Name },
			Annotate: func(o *corev1ac.ServiceApplyConfiguration, a map[string]string) { o.WithAnnotations(a) },
			Get:      func(ns, name string) (metav1.Object, error) { return c.services.Services(ns).Get(name) },
			Apply: func(ctx context.Context, o *corev1ac.ServiceApplyConfiguration) error {
				_, err := c.kube.CoreV1().Services(*o.Namespace).Apply(ctx, o, controller.ApplyOptions)
				return err
			},
		},
		deployments: controller.Applied[*appsv1ac.DeploymentApplyConfiguration]{
			Kind:     "Deployment",
			Key:      func(o *appsv1ac.DeploymentApplyConfiguration) (string, string) { return *o.Namespace, *o.Name },
			Annotate: func(o *appsv1ac.DeploymentApplyConfiguration, a map[string]string) { o.WithAnnotations(a) },
			Get:      func(ns, name string) (metav1.Object, error) { return c.deployments.Deployments(ns).Get(name) },
			Apply: func(ctx context.Context, o *appsv1ac.DeploymentApplyConfiguration) error {
				_, err := c.kube.AppsV1().Deployments(*o.Namespace).Apply(ctx, o, controller.ApplyOptions)
				return err
			},
		},
	}
}
