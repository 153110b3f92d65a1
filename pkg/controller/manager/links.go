package manager

import (
	"context"
	"fmt"
	"slices"
	"time"

	cmclientset "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned"
	cminformers "github.com/cert-manager/cert-manager/pkg/client/informers/externalversions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/link/remote"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/kubeconfig"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// reportInterval is how often the remote side looks at its linked consumers to report them:
// remote.Reporter sends what changed, and the rest once a remote.ReportEvery. A look reads
// the caches only, so it is frequent: a rotation at home waits for what a linked consumer
// reports, and hears of a change at most this long after the remote's caches did.
const reportInterval = 2 * time.Second

// links is what this server runs as the remote side of the links its consumers name
// (docs/links.md#the-remote-server): a stream per bootstrap Secret (remote.Manager), the
// LinkIssuer that signs their certificates over the link, and the Reporter of their states.
type links struct {
	manager  *remote.Manager
	reporter *remote.Reporter
	// newIssuer makes the LinkIssuer, and certManager the informers of its
	// CertificateRequests, once a consumer names a link (runIssuer).
	newIssuer   func() (*remote.Issuer, error)
	certManager cminformers.SharedInformerFactory
	indexes     controller.Indexes
	host        *hostcluster.Host
	changed     <-chan struct{}
}

// linkedKind is a kind of linked consumer: its consumer kind, the owner label's kind of what
// it writes, its descriptor, and the bootstrap Secret and conditions of one of its objects.
type linkedKind struct {
	kind      link.ConsumerKind
	label     string
	described controller.Described
	// cacheClient: its consumers may have a cache client signed over the link
	// (remote.ConsumerSource.CacheClient).
	cacheClient bool
	of          func(obj any) (m metav1.Object, bootstrap string, conditions []metav1.Condition, ok bool)
}

var linkedKinds = []linkedKind{
	{kind: link.Shard, label: shard.Kind, described: kinds.Shard, cacheClient: true, of: func(obj any) (metav1.Object, string, []metav1.Condition, bool) {
		s, ok := obj.(*operatorv1alpha1.Shard)
		if !ok || s.Spec.RootShard.Link == nil {
			return nil, "", nil, false
		}
		return s, s.Spec.RootShard.Link.SecretRef.Name, s.Status.Conditions, true
	}},
	{kind: link.FrontProxy, label: frontproxy.Kind, described: kinds.FrontProxy, of: func(obj any) (metav1.Object, string, []metav1.Condition, bool) {
		fp, ok := obj.(*operatorv1alpha1.FrontProxy)
		if !ok || fp.Spec.RootShard.Link == nil {
			return nil, "", nil, false
		}
		return fp, fp.Spec.RootShard.Link.SecretRef.Name, fp.Status.Conditions, true
	}},
	{kind: link.Kubeconfig, label: kubeconfig.Kind, described: kinds.Kubeconfig, of: func(obj any) (metav1.Object, string, []metav1.Condition, bool) {
		kc, ok := obj.(*operatorv1alpha1.Kubeconfig)
		if !ok || kc.Spec.Target.RootShardLink == nil {
			return nil, "", nil, false
		}
		return kc, kc.Spec.Target.RootShardLink.SecretRef.Name, kc.Status.Conditions, true
	}},
}

// newLinks sets up the remote side over the controllers' informers and host, before the
// informers start.
func newLinks(namespaces hostcluster.WatchNamespaces, kube kubernetes.Interface, certManager cmclientset.Interface, f factories,
	host *hostcluster.Host) (*links, error) {
	inf := f.informers()
	indexes, err := kinds.All.AddIndexes(inf)
	if err != nil {
		return nil, err
	}
	changed, err := controller.OnLinkedChange(kinds.All, inf)
	if err != nil {
		return nil, err
	}
	l := &links{manager: remote.NewManager(kube), indexes: indexes, host: host, changed: changed}
	var sources []remote.ConsumerSource
	for _, k := range linkedKinds {
		sources = append(sources, remote.ConsumerSource{Kind: k.kind, Label: k.label, Bootstrap: controller.LinkedBootstrapOf(indexes, k.described.KindName()),
			CacheClient: k.cacheClient})
	}
	// The LinkIssuer signs only for the Certificates the controllers applied (and still
	// hold): what the host's Certificate applier returns, forgotten when deleted.
	applied := remote.NewApplied()
	host.CertificateApplier.Returned = applied.Record
	if _, err := f.host.Certmanager().V1().Certificates().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: applied.Forget}); err != nil {
		return nil, err
	}
	l.newIssuer = func() (*remote.Issuer, error) {
		l.certManager = certificateRequestInformers(namespaces, owned, certManager)
		return remote.NewIssuer(certManager, kube, l.certManager.Certmanager().V1().CertificateRequests(), f.host.Certmanager().V1().Certificates().Lister(),
			applied, l.manager.Signer, sources)
	}
	l.reporter = &remote.Reporter{Send: func(ctx context.Context, bootstrap types.NamespacedName, ev link.Event) error {
		c, err := l.manager.Client(bootstrap)
		if err != nil {
			return err
		}
		return c.Report(ctx, ev)
	}}
	return l, nil
}

// state is the controllers' Deps.LinkState: the link's State, as LinkReady says it.
func (l *links) state(namespace, bootstrap string) (bool, string, string) {
	st, ok := l.manager.State(namespace, bootstrap)
	switch {
	case !ok:
		return false, operatorv1alpha1.ReasonLinkNotHeld, fmt.Sprintf("this server holds no link of the bootstrap Secret %s yet", bootstrap)
	case st.Connected:
		return true, operatorv1alpha1.ReasonLinkConnected, fmt.Sprintf("the link of the bootstrap Secret %s is connected", bootstrap)
	case st.Error != "":
		return false, operatorv1alpha1.ReasonLinkDisconnected,
			fmt.Sprintf("the link of the bootstrap Secret %s is down, and what it realized stays: %s", bootstrap, st.Error)
	}
	return false, operatorv1alpha1.ReasonLinkDisconnected, fmt.Sprintf("the link of the bootstrap Secret %s is not connected yet", bootstrap)
}

// deregister is the controllers' Deps.LinkDeregister: over the link's Client.
func (l *links) deregister(ctx context.Context, namespace, bootstrap, name, uid string) error {
	c, err := l.manager.Client(types.NamespacedName{Namespace: namespace, Name: bootstrap})
	if err != nil {
		return err
	}
	return c.Deregister(ctx, link.Shard, link.ConsumerRef{Namespace: namespace, Name: name, UID: uid})
}

// onChange is the controllers' Deps.OnLinkStateChange.
func (l *links) onChange(changed func(namespace, bootstrap string)) { l.manager.OnChange(changed) }

// run runs the remote side until ctx is done; the informers are started.
func (l *links) run(ctx context.Context, workers int) {
	go l.manager.Follow(ctx, func() []types.NamespacedName { return controller.LinkedBootstraps(l.indexes) }, l.changed, 10*time.Minute)
	go l.runIssuer(ctx, workers)
	go wait.UntilWithContext(ctx, func(ctx context.Context) { l.reporter.Report(ctx, l.consumers()) }, reportInterval)
}

// consumers are the linked consumers as this server observes them.
func (l *links) consumers() []remote.Consumer {
	var out []remote.Consumer
	for _, k := range linkedKinds {
		objects := l.indexes[k.described.KindName()]
		if objects == nil {
			continue
		}
		for _, obj := range objects.List() {
			m, bootstrap, conditions, ok := k.of(obj)
			if !ok {
				continue
			}
			state, err := link.ReportOf(l.observe(k, m, bootstrap, conditions))
			if err != nil {
				continue
			}
			out = append(out, remote.Consumer{Key: link.ConsumerKey{Kind: k.kind, Namespace: m.GetNamespace(), Name: m.GetName()},
				UID: string(m.GetUID()), Generation: m.GetGeneration(),
				Bootstrap: types.NamespacedName{Namespace: m.GetNamespace(), Name: bootstrap}, State: state})
		}
	}
	return out
}

// observe reads what a consumer's pods trust and what it was issued, per CA of its joined
// RootShard: the trust bundle Join writes for the CA (<joined>-<ca>-ca-trust) where the pods
// mount one, the merged client CA bundle (<joined>-merged-client-ca) for the client and
// front-proxy-client CAs, which the pods trust through it (each without what the home's
// bundles, received over the link of bootstrap, say of the other: link.Without), and the
// certificates its LinkIssuer of that CA signed. A Shard reports its kcp shard (its name) and
// the base URL it registers with.
func (l *links) observe(k linkedKind, m metav1.Object, bootstrap string, conditions []metav1.Condition) link.Observed {
	o := link.Observed{Conditions: conditions, Trust: map[pki.CA][]byte{}, Issued: map[pki.CA][][]byte{}}
	if s, ok := m.(*operatorv1alpha1.Shard); ok && k.kind == link.Shard {
		o.KcpShard, o.BaseURL = s.Name, shard.BaseURL(s)
	}
	// The link's own CA: what the link trusts the home by, and its client certificate.
	if trust, client, ok := l.manager.LinkTrust(types.NamespacedName{Namespace: m.GetNamespace(), Name: bootstrap}); ok {
		o.Trust[pki.LinkCA], o.Issued[pki.LinkCA] = trust, [][]byte{client}
	}
	joined := reference.JoinedName(k.label, m.GetName())
	bundle := func(name string) []byte {
		if s, err := l.host.Secrets.Secrets(m.GetNamespace()).Get(name); err == nil {
			return s.Data[certificates.BundleKey]
		}
		return nil
	}
	merged := bundle(kcp.MergedClientCAName(&operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: joined}}))
	// What the home says of each CA (its signing CA and its live slots), to tell the merged
	// bundle's CAs apart.
	said := func(pki.CA) []byte { return nil }
	if s, err := l.host.Secrets.Secrets(m.GetNamespace()).Get(linkpki.BundlesName(bootstrap)); err == nil {
		data := linkpki.ReferenceData(s, remote.References[k.kind])
		said = func(ca pki.CA) []byte {
			return append(slices.Clone(data[reference.CertKey(ca)]), data[reference.TrustKey(ca)]...)
		}
	}
	byIssuer := map[string]pki.CA{}
	for _, ca := range pki.IntermediateCAs {
		base := pki.CAName(joined, ca)
		byIssuer[base] = ca
		trust := bundle(base + pki.TrustSuffix)
		switch ca {
		case pki.ClientCA:
			trust = link.Without(merged, said(pki.FrontProxyClientCA))
		case pki.FrontProxyClientCA:
			trust = link.Without(merged, said(pki.ClientCA))
		}
		if len(trust) > 0 {
			o.Trust[ca] = trust
		}
	}
	certs, err := l.host.Certificates.Certificates(m.GetNamespace()).List(labels.SelectorFromSet(labels.Set{pki.OwnerLabel(k.label): m.GetName()}))
	if err != nil {
		return o
	}
	for _, c := range certs {
		ca, ok := byIssuer[c.Spec.IssuerRef.Name]
		if !ok || c.Spec.IssuerRef.Kind != linkpki.IssuerKind || o.Trust[ca] == nil {
			continue
		}
		if s, err := l.host.Secrets.Secrets(m.GetNamespace()).Get(c.Spec.SecretName); err == nil && len(s.Data["tls.crt"]) > 0 {
			o.Issued[ca] = append(o.Issued[ca], s.Data["tls.crt"])
		}
	}
	return o
}

// runIssuer runs the LinkIssuer once a consumer names a link, until ctx is done: a server
// that links nothing reads no CertificateRequest, and its RBAC needs none
// (artifacts/deploy-link grants them).
func (l *links) runIssuer(ctx context.Context, workers int) {
	if err := wait.PollUntilContextCancel(ctx, 5*time.Second, true, func(context.Context) (bool, error) {
		return len(controller.LinkedBootstraps(l.indexes)) > 0, nil
	}); err != nil {
		return
	}
	issuer, err := l.newIssuer()
	if err != nil {
		klog.FromContext(ctx).Error(err, "Setting up the LinkIssuer")
		return
	}
	l.certManager.Start(ctx.Done())
	defer l.certManager.Shutdown()
	if err := issuer.Run(ctx, workers); err != nil && ctx.Err() == nil {
		klog.FromContext(ctx).Error(err, "The LinkIssuer stopped")
	}
}
