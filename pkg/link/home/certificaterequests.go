package home

import (
	"context"
	"fmt"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	cmclientset "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/pki"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
)

// SigningRole is the component label of the CertificateRequests the listener makes.
const SigningRole = "link-signing"

// CertificateRequests signs through cert-manager: a CertificateRequest in the Link's
// namespace against the Issuer, owned by the Link (an ownerReference with its UID, and its
// owner labels and UID, pki.Labels), waited for at most Timeout, then deleted. It approves
// nothing: cert-manager's own approver approves the requests of its built-in issuers (the CA
// Issuers the RootShards have), as it does the Certificates' requests; an installation that
// turned it off approves these as it approves those.
type CertificateRequests struct {
	Client cmclientset.Interface
	// Timeout bounds the wait for a signature; zero is DefaultSignTimeout.
	Timeout time.Duration
	// Poll is how often the request is read meanwhile; zero is 200ms.
	Poll time.Duration
}

// DefaultSignTimeout is how long a signature is waited for: a CA Issuer signs in moments.
const DefaultSignTimeout = 30 * time.Second

// CertificateRequest is the CertificateRequest of sg.
func CertificateRequest(sg Signing) *cmv1.CertificateRequest {
	labels := pki.Labels(linkpki.Kind, sg.Link.Name, SigningRole)
	labels[pki.LabelOwnerUID] = sg.Link.UID
	cr := &cmv1.CertificateRequest{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: sg.Link.Name + "-link-",
			Namespace:    sg.Link.Namespace,
			Labels:       labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: operatorv1alpha1.SchemeGroupVersion.String(), Kind: "Link",
				Name: sg.Link.Name, UID: types.UID(sg.Link.UID)}},
		},
		Spec: cmv1.CertificateRequestSpec{
			Request:   sg.Request,
			IssuerRef: cmmeta.IssuerReference{Name: sg.Issuer, Kind: cmv1.IssuerKind, Group: "cert-manager.io"},
			Usages:    sg.Usages,
			IsCA:      false,
		},
	}
	if sg.Duration > 0 {
		cr.Spec.Duration = &metav1.Duration{Duration: sg.Duration}
	}
	return cr
}

// Sign makes sg's CertificateRequest, waits until it is signed, denied or failed, or
// Timeout, and deletes it.
func (c CertificateRequests) Sign(ctx context.Context, sg Signing) (link.SignResponse, error) {
	timeout, poll := c.Timeout, c.Poll
	if timeout == 0 {
		timeout = DefaultSignTimeout
	}
	if poll == 0 {
		poll = 200 * time.Millisecond
	}
	requests := c.Client.CertmanagerV1().CertificateRequests(sg.Link.Namespace)
	cr, err := requests.Create(ctx, CertificateRequest(sg), metav1.CreateOptions{FieldManager: pki.ManagedBy})
	if err != nil {
		return link.SignResponse{}, fmt.Errorf("creating a CertificateRequest against the Issuer %s/%s: %w", sg.Link.Namespace, sg.Issuer, err)
	}
	defer func() {
		// Whatever came of it, and even when the remote went: a request is no record.
		del, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = requests.Delete(del, cr.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cr.UID}})
	}()
	var resp link.SignResponse
	var outcome error
	err = wait.PollUntilContextTimeout(ctx, poll, timeout, false, func(ctx context.Context) (bool, error) {
		got, err := requests.Get(ctx, cr.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			outcome = fmt.Errorf("%w: the CertificateRequest %s/%s was deleted", ErrDenied, cr.Namespace, cr.Name)
			return true, nil
		}
		if err != nil {
			return false, nil
		}
		resp, outcome = Outcome(got)
		return outcome != nil || len(resp.Certificate) > 0, nil
	})
	if outcome != nil {
		return link.SignResponse{}, outcome
	}
	if err != nil || len(resp.Certificate) == 0 {
		if ctx.Err() != nil {
			return link.SignResponse{}, ctx.Err()
		}
		return link.SignResponse{}, fmt.Errorf("%w: the CertificateRequest %s/%s after %s", ErrNotSignedYet, cr.Namespace, cr.Name, timeout)
	}
	return resp, nil
}

// Outcome is what the CertificateRequest cr came to: its chain and CA once Ready, an
// ErrDenied when it was denied, failed or invalid, and neither while it is pending.
func Outcome(cr *cmv1.CertificateRequest) (link.SignResponse, error) {
	for _, c := range cr.Status.Conditions {
		switch {
		case c.Type == cmv1.CertificateRequestConditionDenied && c.Status == cmmeta.ConditionTrue,
			c.Type == cmv1.CertificateRequestConditionInvalidRequest && c.Status == cmmeta.ConditionTrue,
			c.Type == cmv1.CertificateRequestConditionReady && c.Status == cmmeta.ConditionFalse &&
				(c.Reason == cmv1.CertificateRequestReasonFailed || c.Reason == cmv1.CertificateRequestReasonDenied):
			return link.SignResponse{}, fmt.Errorf("%w: the CertificateRequest %s/%s is %s (%s): %s", ErrDenied, cr.Namespace, cr.Name, c.Type, c.Reason, c.Message)
		}
	}
	if cr.Status.FailureTime != nil {
		return link.SignResponse{}, fmt.Errorf("%w: the CertificateRequest %s/%s failed", ErrDenied, cr.Namespace, cr.Name)
	}
	for _, c := range cr.Status.Conditions {
		if c.Type == cmv1.CertificateRequestConditionReady && c.Status == cmmeta.ConditionTrue && len(cr.Status.Certificate) > 0 {
			return link.SignResponse{Certificate: cr.Status.Certificate, CA: cr.Status.CA}, nil
		}
	}
	return link.SignResponse{}, nil
}

var _ Signer = CertificateRequests{}
