package link

import (
	"context"
	"fmt"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// Reconcile realizes a Link: once its RootShard exists, its client certificate; once that,
// the RootShard's link CA and the listener's serving certificate are issued and the
// listener's URL is known, its bootstrap Secret. Ready says which is missing.
func (c *Controller) Reconcile(ctx context.Context, l *operatorv1alpha1.Link, status *operatorv1alpha1.LinkStatus) error {
	rs, err := kinds.RootShard.Lister(c.Indexes, l.Namespace).Get(l.Spec.RootShardRef.Name)
	if apierrors.IsNotFound(err) {
		msg := fmt.Sprintf("RootShard %q does not exist in namespace %q", l.Spec.RootShardRef.Name, l.Namespace)
		c.notReady(l, status, operatorv1alpha1.ReasonRootShardNotFound, msg)
		return nil
	}
	if err != nil {
		return err
	}
	d := Declaration(l, rs, c.listenerURL)
	w := c.Host.Writes(ctx)
	w.Certificates(nil, []*cmapply.CertificateApplyConfiguration{link.Client(d)})
	bootstrap, reason, message, err := c.bootstrap(d)
	w.Secret(bootstrap, err)
	wrote, err := w.Done()
	c.Applied(l, wrote, err)
	if err != nil {
		return err
	}
	if bootstrap == nil {
		c.notReady(l, status, reason, message)
		return nil
	}
	status.BootstrapSecretName = link.BootstrapName(l.Name)
	c.SetCondition(l, status, operatorv1alpha1.ConditionLinkReady, metav1.ConditionTrue, operatorv1alpha1.ReasonLinkReady,
		fmt.Sprintf("the bootstrap Secret %q holds what the remote needs to connect, once", status.BootstrapSecretName))
	return nil
}

// Declaration is what the builders need of the Link l of the RootShard rs, whose remotes
// reach the listener at listenerURL.
func Declaration(l *operatorv1alpha1.Link, rs *operatorv1alpha1.RootShard, listenerURL string) link.Declaration {
	return link.Declaration{Namespace: l.Namespace, Name: l.Name, UID: l.UID, Identity: l.Spec.Identity, RootShard: rs, ListenerURL: listenerURL}
}

// bootstrap is the Link's bootstrap Secret, or nil with the reason and message of Ready
// while something it is made of is missing: the RootShard's link CA or the Link's client
// certificate not issued yet (their Secrets' events bring the Link back), or no listener.
func (c *Controller) bootstrap(d link.Declaration) (s *corev1ac.SecretApplyConfiguration, reason, message string, err error) {
	trust, issued, err := c.Host.LiveCAs(d.Namespace, link.CAName(d.RootShard), pki.SlotsOf(d.RootShard.Status.Rotations, link.Authority))
	if err != nil {
		return nil, "", "", err
	}
	if !issued {
		return nil, operatorv1alpha1.ReasonLinkCertificatesNotReady,
			fmt.Sprintf("waiting for cert-manager to issue the link CA %s", link.CAName(d.RootShard)), nil
	}
	client, err := c.Host.Issued(d.Namespace, link.ClientName(d.Name), corev1.TLSCertKey, corev1.TLSPrivateKeyKey)
	if err != nil {
		return nil, "", "", err
	}
	if client == nil {
		return nil, operatorv1alpha1.ReasonLinkCertificatesNotReady,
			fmt.Sprintf("waiting for cert-manager to issue the client certificate %s", link.ClientName(d.Name)), nil
	}
	// The listener serves the RootShard's remotes with its serving certificate: a bootstrap
	// Secret is of use, and the Link Ready, only once a remote can connect with it.
	serving, err := c.Host.Issued(d.Namespace, link.ServerCertificateName(d.RootShard), corev1.TLSCertKey, corev1.TLSPrivateKeyKey)
	if err != nil {
		return nil, "", "", err
	}
	if serving == nil {
		return nil, operatorv1alpha1.ReasonLinkCertificatesNotReady,
			fmt.Sprintf("waiting for cert-manager to issue the listener's serving certificate %s", link.ServerCertificateName(d.RootShard)), nil
	}
	if d.ListenerURL == "" {
		return nil, operatorv1alpha1.ReasonLinkListenerNotServed,
			"this server serves no link listener, so no bootstrap Secret can say where to connect", nil
	}
	s, err = link.Bootstrap(d, reference.FromSecret(client), trust)
	return s, "", "", err
}

// notReady sets Ready=False for reason: no bootstrap Secret is reported while one is missing.
func (c *Controller) notReady(l *operatorv1alpha1.Link, status *operatorv1alpha1.LinkStatus, reason, message string) {
	status.BootstrapSecretName = ""
	c.SetCondition(l, status, operatorv1alpha1.ConditionLinkReady, metav1.ConditionFalse, reason, message)
}

// Watches are what a Link's reconcile reads.
func (c *Controller) Watches() controller.Watches {
	return controller.Watches{
		Kinds: []controller.Reference{
			// Its RootShard appearing, going, or rotating its link CA.
			{Kind: kinds.RootShard, Keys: c.ofRootShard},
		},
		// What the controller owns (the client certificate, its Secret, the bootstrap), and
		// the link CA's Secrets its RootShard owns (Users).
		Host:  []controller.HostResource{controller.Secrets, controller.Certificates},
		Users: c.users,
	}
}

// users are the Links a host object concerns besides its owner: those of the RootShard
// whose link CA or listener's serving certificate it is.
func (c *Controller) users(m metav1.Object) []string {
	labels := m.GetLabels()
	rs := labels[pki.OwnerLabel(rootshard.Kind)]
	if component := labels[pki.LabelComponent]; rs == "" || (component != pki.LinkCA.TemplateKey() && component != link.ServerRole) {
		return nil
	}
	return c.Keys(controller.RootShardIndex, controller.IndexValue(m.GetNamespace(), rs))
}

// ofRootShard are the Links that name a RootShard.
func (c *Controller) ofRootShard(m metav1.Object) []string {
	return c.Keys(controller.RootShardIndex, controller.IndexValue(m.GetNamespace(), m.GetName()))
}
