package link

import (
	"encoding/pem"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clienttesting "k8s.io/client-go/testing"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/hostnames"
	"github.com/kcp-setups/apiserver/pkg/resources/link"
)

const listener = "https://links.example.com:6443"

// fixture is a Link Controller over a fake host and hand-fed caches.
type fixture struct {
	*controllertest.Fixture[*operatorv1alpha1.Link, operatorv1alpha1.LinkStatus]
	c *Controller
}

func newFixture(t *testing.T, objs ...metav1.Object) *fixture {
	f := &fixture{Fixture: controllertest.NewFixture(t, kinds.Link, objs...)}
	f.c = controllertest.ControllerOf[Controller](f.Fixture)
	return f
}

// sync syncs the Link, then lets its cache and the host catch up.
func (f *fixture) sync(t *testing.T) *operatorv1alpha1.Link {
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/eu-1"))
	got := f.Stored(t, "team-a", "eu-1")
	f.Host.CatchUp(t)
	return got
}

func newLink() *operatorv1alpha1.Link {
	return &operatorv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Name: "eu-1", Namespace: "team-a", UID: "uid-1", Generation: 1, Finalizers: []string{kinds.Link.Finalizer()}},
		Spec: operatorv1alpha1.LinkSpec{RootShardRef: corev1.LocalObjectReference{Name: "root"}, Identity: "eu-1.links.example.com",
			Consumers: []operatorv1alpha1.LinkConsumerKind{operatorv1alpha1.LinkConsumerShard}},
	}
}

func rootShard() *operatorv1alpha1.RootShard {
	return &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a", UID: "rs-uid"}}
}

// linkCA is the RootShard's link CA as cert-manager issues it (the RootShard controller
// applies its Certificate).
func linkCA() *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root-link-ca",
		Labels: pki.Labels("rootshard", "root", pki.LinkCA.TemplateKey())},
		Data: map[string][]byte{"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("link-ca")}), "tls.key": []byte("k")}}
}

// listenerServing is the listener's serving certificate of the RootShard as cert-manager
// issues it (the RootShard controller applies its Certificate).
func listenerServing() *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root-link-server",
		Labels: pki.Labels("rootshard", "root", link.ServerRole)},
		Data: map[string][]byte{"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("serving")}), "tls.key": []byte("k")}}
}

func ready(t *testing.T, l *operatorv1alpha1.Link) *metav1.Condition {
	t.Helper()
	c := meta.FindStatusCondition(l.Status.Conditions, operatorv1alpha1.ConditionLinkReady)
	require.NotNil(t, c, "conditions: %+v", l.Status.Conditions)
	return c
}

func TestLinkWithoutItsRootShardWaits(t *testing.T) {
	f := newFixture(t, newLink())
	got := f.sync(t)
	c := ready(t, got)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, operatorv1alpha1.ReasonRootShardNotFound, c.Reason)
	assert.Empty(t, got.Status.BootstrapSecretName)
	assert.EqualValues(t, 1, got.Status.ObservedGeneration)
	assert.Empty(t, f.Host.Caches["certificates"].List(), "nothing is issued for a RootShard that does not exist")
}

func TestLinkClientCertificateIsPinnedToItsIdentityAndUID(t *testing.T) {
	f := newFixture(t, newLink(), rootShard())
	got := f.sync(t)
	c := ready(t, got)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, operatorv1alpha1.ReasonLinkCertificatesNotReady, c.Reason, "the RootShard's link CA is not issued yet")
	assert.Contains(t, c.Message, "root-link-ca")

	obj, exists, err := f.Host.Caches["certificates"].GetByKey("team-a/eu-1-link-client")
	require.NoError(t, err)
	require.True(t, exists, "the Link's client certificate is applied once its RootShard exists")
	cert := obj.(*cmv1.Certificate)
	assert.Equal(t, "root-link-ca", cert.Spec.IssuerRef.Name)
	assert.Equal(t, []string{"eu-1.links.example.com"}, cert.Spec.DNSNames)
	assert.Equal(t, []string{"kcp-setups:link:team-a/eu-1/uid-1"}, cert.Spec.URIs)
	assert.Equal(t, "eu-1", cert.Labels[pki.OwnerLabel(link.Kind)], "owned by the Link")
	_, exists, err = f.Host.Caches["secrets"].GetByKey("team-a/eu-1-link-bootstrap")
	require.NoError(t, err)
	assert.False(t, exists, "no bootstrap Secret before the certificates are issued")
}

func TestLinkWithoutListenerWritesNoBootstrap(t *testing.T) {
	f := newFixture(t, newLink(), rootShard(), linkCA(), listenerServing())
	f.sync(t) // the client certificate, issued by CatchUp
	got := f.sync(t)
	c := ready(t, got)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, operatorv1alpha1.ReasonLinkListenerNotServed, c.Reason)
	assert.Empty(t, got.Status.BootstrapSecretName)
	_, exists, err := f.Host.Caches["secrets"].GetByKey("team-a/eu-1-link-bootstrap")
	require.NoError(t, err)
	assert.False(t, exists, "no bootstrap Secret while the listener's URL is unknown")
}

// TestLinkWaitsForTheListenersServingCertificate: a remote cannot connect before the
// listener serves the RootShard: no bootstrap Secret, and Ready says what it waits for.
func TestLinkWaitsForTheListenersServingCertificate(t *testing.T) {
	f := newFixture(t, newLink(), rootShard(), linkCA())
	f.c.Configure(controller.Deps{LinkListenerURL: listener})
	f.sync(t)
	got := f.sync(t)
	c := ready(t, got)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, operatorv1alpha1.ReasonLinkCertificatesNotReady, c.Reason)
	assert.Contains(t, c.Message, "root-link-server")
	_, exists, err := f.Host.Caches["secrets"].GetByKey("team-a/eu-1-link-bootstrap")
	require.NoError(t, err)
	assert.False(t, exists, "no bootstrap Secret before the listener can serve")
}

func TestLinkBootstrapOnceEverythingIsThere(t *testing.T) {
	f := newFixture(t, newLink(), rootShard(), linkCA(), listenerServing())
	f.c.Configure(controller.Deps{LinkListenerURL: listener})
	f.sync(t)
	got := f.sync(t)
	c := ready(t, got)
	assert.Equal(t, metav1.ConditionTrue, c.Status, "conditions: %+v", got.Status.Conditions)
	assert.Equal(t, operatorv1alpha1.ReasonLinkReady, c.Reason)
	assert.Equal(t, "eu-1-link-bootstrap", got.Status.BootstrapSecretName)

	s := f.Host.Secret(t, "team-a", "eu-1-link-bootstrap")
	assert.Equal(t, link.BootstrapType, s.Type)
	assert.Equal(t, listener, string(s.Data[link.ListenerURLKey]))
	assert.Equal(t, "root.team-a.link.kcp-setups.local", string(s.Data[link.ServerNameKey]))
	assert.Equal(t, linkCA().Data["tls.crt"], s.Data[link.CACertKey])
	client := f.Host.Secret(t, "team-a", "eu-1-link-client")
	assert.Equal(t, client.Data["tls.crt"], s.Data[link.ClientCertKey])
	assert.Equal(t, client.Data["tls.key"], s.Data[link.ClientKeyKey])
	assert.Equal(t, "eu-1", s.Labels[pki.OwnerLabel(link.Kind)], "owned by the Link")

	f.Reset()
	f.sync(t)
	assert.Empty(t, f.Writes(), "a resync of an unchanged, ready Link must not write")
}

func TestLinkReportsNoBootstrapOnceItsRootShardIsGone(t *testing.T) {
	l := newLink()
	l.Status.BootstrapSecretName = "eu-1-link-bootstrap"
	f := newFixture(t, l)
	got := f.sync(t)
	assert.Empty(t, got.Status.BootstrapSecretName)
	assert.Equal(t, operatorv1alpha1.ReasonRootShardNotFound, ready(t, got).Reason)
}

// TestBuildReadsTheListenerFromDeps: the controller the manager sets up reads the listener's
// URL from its deps; zero is none.
func TestBuildReadsTheListenerFromDeps(t *testing.T) {
	assert.Equal(t, listener, controller.Build[Controller](kinds.Link, controller.Deps{LinkListenerURL: listener}).listenerURL)
	assert.Empty(t, controller.Build[Controller](kinds.Link, controller.Deps{}).listenerURL)
}

// TestWatches: a RootShard's events, its link CA's and its listener serving certificate's
// wake the Links that name it, and no other.
func TestWatches(t *testing.T) {
	other := newLink()
	other.Name, other.UID, other.Spec.RootShardRef.Name = "eu-2", "uid-2", "other"
	f := newFixture(t, newLink(), other)
	w := f.c.Watches()
	require.Len(t, w.Kinds, 1)
	assert.Equal(t, []string{"team-a/eu-1"}, w.Kinds[0].Keys(rootShard()))
	assert.Equal(t, []string{"team-a/eu-1"}, w.Users(linkCA()))
	assert.Equal(t, []string{"team-a/eu-1"}, w.Users(listenerServing()), "the listener's serving certificate, issued, wakes the Links")
	notLink := linkCA()
	notLink.Labels = pki.Labels("rootshard", "root", pki.ServerCA.TemplateKey())
	assert.Empty(t, w.Users(notLink), "the RootShard's other CAs concern no Link")
	assert.Empty(t, w.Kinds[0].Keys(&operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "root"}}))
}

// TestDerivedNamesCoverWhatIsWritten: every host object a ready Link's controller writes is
// a name hostnames.Link derives, which the registry refuses to let another object of the
// namespace derive.
func TestDerivedNamesCoverWhatIsWritten(t *testing.T) {
	l := newLink()
	f := newFixture(t, l, rootShard(), linkCA(), listenerServing())
	f.c.Configure(controller.Deps{LinkListenerURL: listener})
	before := f.Host.HostNames("team-a")
	for range 3 {
		f.sync(t)
	}
	require.Equal(t, "eu-1-link-bootstrap", f.Stored(t, "team-a", "eu-1").Status.BootstrapSecretName, "the Link is realized whole")
	f.Host.AssertDerived(t, "team-a", before, hostnames.Link(l))
}

// TestDeletionRemovesWhatTheLinkOwnsOnly: a deleted Link's client certificate and bootstrap
// Secret go (by its owner label and UID), nothing of its RootShard's, and the namespace
// bootstrap PKI, which a Link does not use, is left alone.
func TestDeletionRemovesWhatTheLinkOwnsOnly(t *testing.T) {
	deleting := newLink()
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	f := newFixture(t, deleting, rootShard(), linkCA())
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/eu-1"))
	var deletes []string
	for _, a := range append(f.Host.Kube.Actions(), f.Host.CM.Actions()...) {
		if dc, ok := a.(clienttesting.DeleteCollectionAction); ok {
			deletes = append(deletes, a.GetResource().Resource+" "+dc.GetListRestrictions().Labels.String())
		}
	}
	assert.Contains(t, deletes, "certificates app.kubernetes.io/managed-by=kcp-setups,operator.kcp.io/link=eu-1,operator.kcp.io/owner-uid=uid-1")
	assert.Contains(t, deletes, "secrets app.kubernetes.io/managed-by=kcp-setups,operator.kcp.io/link=eu-1,operator.kcp.io/owner-uid=uid-1")
	for _, d := range deletes {
		assert.NotContains(t, d, "rootshard", "nothing of the RootShard goes with a Link")
		assert.NotContains(t, d, "pki-bootstrap", "a Link does not use the namespace bootstrap")
	}
	got, err := f.Ours.OperatorV1alpha1().Links("team-a").Get(t.Context(), "eu-1", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, got.Finalizers, "the finalizer goes once what the Link owns is deleted")
}
