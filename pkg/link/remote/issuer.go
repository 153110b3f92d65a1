package remote

import (
	"context"
	"errors"
	"fmt"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	cmclientset "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned"
	cminformers "github.com/cert-manager/cert-manager/pkg/client/informers/externalversions/certmanager/v1"
	cmlisters "github.com/cert-manager/cert-manager/pkg/client/listers/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// Signer signs a CSR over a link: a *Client.
type Signer interface {
	Sign(ctx context.Context, kind link.ConsumerKind, role pki.CA, consumer link.ConsumerRef, csrPEM []byte, duration time.Duration) (link.SignResponse, error)
}

// ApprovalReason is the reason of the Approved and Denied conditions the issuer sets: as
// cert-manager's approver names itself, the signer names itself.
const ApprovalReason = "operator.kcp.io"

// Issuer is the external cert-manager issuer LinkIssuer, as cert-manager's external issuers
// are: it watches the CertificateRequests that name it, approves a linked consumer's (the
// remote server is the signer) and denies any other's, forwards each approved one's CSR over
// the consumer's link, and writes the answer: status.certificate and status.ca, Ready True
// (Issued); Ready False Pending while the home cannot be reached (retried with backoff);
// Ready False Failed when the home refused it (no retry); Ready False Denied for a denied one.
type Issuer struct {
	client       cmclientset.Interface
	requests     cmlisters.CertificateRequestLister
	certificates cmlisters.CertificateLister
	// kube reads the Secrets of cert-manager's next private keys.
	kube    kubernetes.Interface
	applied *Applied
	synced  cache.InformerSynced
	// signer is the Signer of the link of a bootstrap Secret (Manager.Client).
	signer  func(types.NamespacedName) (Signer, error)
	sources []ConsumerSource
	queue   workqueue.TypedRateLimitingInterface[string]
	now     func() time.Time
}

// NewIssuer is the LinkIssuer over the CertificateRequests of requests, reading the
// Certificates through certificates (and client, when the cache has not seen one yet or
// not its issuance), writing through client, reading the Secrets of cert-manager's next
// private keys through kube, signing through the Signer of each link, finding the linked
// consumers through sources, and the Certificates this server applied in applied.
func NewIssuer(client cmclientset.Interface, kube kubernetes.Interface, requests cminformers.CertificateRequestInformer,
	certificates cmlisters.CertificateLister, applied *Applied, signer func(types.NamespacedName) (Signer, error),
	sources []ConsumerSource) (*Issuer, error) {
	i := &Issuer{client: client, kube: kube, applied: applied, requests: requests.Lister(), certificates: certificates, synced: requests.Informer().HasSynced,
		signer: signer, sources: sources, now: time.Now,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "linkissuer"})}
	enqueue := func(obj any) {
		if cr, ok := obj.(*cmv1.CertificateRequest); ok && IsLinkIssuers(cr) {
			if key, err := cache.MetaNamespaceKeyFunc(cr); err == nil {
				i.queue.Add(key)
			}
		}
	}
	_, err := requests.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) }})
	if err != nil {
		return nil, err
	}
	return i, nil
}

// Run runs workers until ctx is done.
func (i *Issuer) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrash()
	defer i.queue.ShutDown()
	if !cache.WaitForNamedCacheSyncWithContext(ctx, i.synced) {
		return errors.New("the LinkIssuer: the CertificateRequests' cache did not sync")
	}
	for range workers {
		go wait.UntilWithContext(ctx, i.work, time.Second)
	}
	<-ctx.Done()
	return nil
}

func (i *Issuer) work(ctx context.Context) {
	for {
		key, quit := i.queue.Get()
		if quit {
			return
		}
		func() {
			defer i.queue.Done(key)
			after, err := i.sync(ctx, key)
			switch {
			case err != nil:
				klog.FromContext(ctx).Info("The LinkIssuer will retry a CertificateRequest", "certificateRequest", key, "err", err)
				i.queue.AddRateLimited(key)
			case after > 0:
				i.queue.AddAfter(key, after)
			default:
				i.queue.Forget(key)
			}
		}()
	}
}

// sync handles the CertificateRequest key: an error retries it with backoff, a wait after
// it that long (a Retry-After of the home).
func (i *Issuer) sync(ctx context.Context, key string) (time.Duration, error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil
	}
	cr, err := i.requests.CertificateRequests(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	d, err := Decide(cr, Lookups{
		Certificate: func(namespace, name string) (*cmv1.Certificate, error) { return i.certificate(ctx, namespace, name) },
		Applied:     i.applied.Of,
		Secret:      func(namespace, name string) (*corev1.Secret, error) { return i.secret(ctx, namespace, name) },
	}, i.sources)
	if err != nil {
		return 0, err
	}
	if d.Verdict == Wait {
		return 0, errors.New(d.Why)
	}
	cached := cr
	cr = cr.DeepCopy()
	switch d.Verdict {
	case Ignore:
		return 0, nil
	case Refuse:
		i.fail(cr, cmv1.CertificateRequestReasonDenied, "The CertificateRequest was denied by an approver")
		return 0, i.write(ctx, cached, cr)
	case Deny:
		message := "The LinkIssuer signs only the requests of a linked consumer's Certificates: " + d.Why
		if hasCondition(cr, cmv1.CertificateRequestConditionApproved) {
			// Approved by another approver: a denial cannot follow, a failure does.
			i.fail(cr, cmv1.CertificateRequestReasonFailed, message)
		} else {
			setCondition(cr, cmv1.CertificateRequestConditionDenied, cmmeta.ConditionTrue, ApprovalReason, message, i.now())
			i.fail(cr, cmv1.CertificateRequestReasonDenied, message)
		}
		return 0, i.write(ctx, cached, cr)
	}
	if !hasCondition(cr, cmv1.CertificateRequestConditionApproved) {
		setCondition(cr, cmv1.CertificateRequestConditionApproved, cmmeta.ConditionTrue, ApprovalReason,
			fmt.Sprintf("The request of the %s %s, signed over the link of the bootstrap Secret %s", d.Linked.Kind, d.Linked.Consumer.Name,
				d.Linked.Bootstrap.Name), i.now())
	}
	return i.sign(ctx, cached, cr, d)
}

// sign sends cr over the link d names and writes the outcome.
func (i *Issuer) sign(ctx context.Context, cached, cr *cmv1.CertificateRequest, d Decision) (time.Duration, error) {
	pending := func(err error) (time.Duration, error) {
		setCondition(cr, cmv1.CertificateRequestConditionReady, cmmeta.ConditionFalse, cmv1.CertificateRequestReasonPending,
			"Waiting for the link's home to sign it: "+err.Error(), i.now())
		if werr := i.write(ctx, cached, cr); werr != nil {
			return 0, werr
		}
		if after, ok := RetryAfter(err); ok {
			return after, nil
		}
		return 0, err
	}
	signer, err := i.signer(d.Linked.Bootstrap)
	if err != nil {
		return pending(err)
	}
	var duration time.Duration
	if cr.Spec.Duration != nil {
		duration = cr.Spec.Duration.Duration
	}
	out, err := signer.Sign(ctx, d.Linked.Kind, d.Role, d.Linked.Consumer, cr.Spec.Request, duration)
	switch {
	case IsRefused(err):
		i.fail(cr, cmv1.CertificateRequestReasonFailed, "The link's home refused to sign it: "+err.Error())
		return 0, i.write(ctx, cached, cr)
	case err != nil:
		return pending(err)
	}
	cr.Status.Certificate, cr.Status.CA = out.Certificate, out.CA
	setCondition(cr, cmv1.CertificateRequestConditionReady, cmmeta.ConditionTrue, cmv1.CertificateRequestReasonIssued,
		"Signed by the link's home", i.now())
	return 0, i.write(ctx, cached, cr)
}

// fail marks cr not Ready for reason, for good.
func (i *Issuer) fail(cr *cmv1.CertificateRequest, reason, message string) {
	setCondition(cr, cmv1.CertificateRequestConditionReady, cmmeta.ConditionFalse, reason, message, i.now())
	now := metav1.NewTime(i.now())
	cr.Status.FailureTime = &now
}

// write writes the status of cr, unless it is the status of cached, as the cache has it.
func (i *Issuer) write(ctx context.Context, cached, cr *cmv1.CertificateRequest) error {
	if equality.Semantic.DeepEqual(cached.Status, cr.Status) {
		return nil
	}
	_, err := i.client.CertmanagerV1().CertificateRequests(cr.Namespace).UpdateStatus(ctx, cr, metav1.UpdateOptions{FieldManager: pki.ManagedBy})
	return err
}

// certificate is the Certificate namespace/name from the cache, or from the API when the
// cache has not seen it yet or not its issuance (no status.nextPrivateKeySecretName: the
// CertificateRequests' cache may be ahead); nil when there is none.
func (i *Issuer) certificate(ctx context.Context, namespace, name string) (*cmv1.Certificate, error) {
	crt, err := i.certificates.Certificates(namespace).Get(name)
	if apierrors.IsNotFound(err) || err == nil && crt.Status.NextPrivateKeySecretName == nil {
		crt, err = i.client.CertmanagerV1().Certificates(namespace).Get(ctx, name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return crt, err
}

// secret is the Secret namespace/name, read from the API (cert-manager's next private keys
// are in no cache of ours); nil when there is none.
func (i *Issuer) secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	s, err := i.kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return s, err
}

// setCondition sets the condition t of cr, keeping its transition time when its status does
// not change, as cert-manager's issuers do.
func setCondition(cr *cmv1.CertificateRequest, t cmv1.CertificateRequestConditionType, status cmmeta.ConditionStatus, reason, message string, now time.Time) {
	c := cmv1.CertificateRequestCondition{Type: t, Status: status, Reason: reason, Message: message}
	at := metav1.NewTime(now)
	c.LastTransitionTime = &at
	for n, have := range cr.Status.Conditions {
		if have.Type != t {
			continue
		}
		if have.Status == status {
			c.LastTransitionTime = have.LastTransitionTime
		}
		cr.Status.Conditions[n] = c
		return
	}
	cr.Status.Conditions = append(cr.Status.Conditions, c)
}

var _ Signer = (*Client)(nil)
