// Package kubeconfigrequest serves the kubeconfig subresource of RootShards, Shards and
// FrontProxies: it mints a short-lived client certificate for the requester, signed in
// process by the RootShard's front-proxy-client CA, and answers with a kubeconfig. Nothing is
// stored: the credential exists only in the response.
package kubeconfigrequest

import (
	"context"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/util/dryrun"
	"k8s.io/apiserver/pkg/warning"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/validation"
	"github.com/kcp-setups/apiserver/pkg/credentials"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// DefaultMaxExpiration is the longest lifetime of a minted credential, unless the server's
// --max-kubeconfig-expiration says otherwise.
const DefaultMaxExpiration = 24 * time.Hour

// The audit annotations of a mint.
const (
	AuditFingerprint = "operator.kcp.io/kubeconfig-certificate-sha256"
	AuditSerial      = "operator.kcp.io/kubeconfig-certificate-serial"
	AuditSubject     = "operator.kcp.io/kubeconfig-certificate-subject"
)

// Resolver finds the target of the object name in namespace. A missing object is NotFound;
// a target that cannot have credentials yet is Conflict.
type Resolver func(ctx context.Context, namespace, name string) (credentials.Target, error)

// REST is the kubeconfig subresource of one kind; only how a target resolves differs.
type REST struct {
	// Resource is the parent resource, for errors: rootshards, shards or frontproxies.
	Resource schema.GroupResource
	Resolve  Resolver
	// CAs reads the signing CA and the server CA bundle from the host cluster's cache.
	CAs *CASource
	// Authorizer decides whether the requester may mint for another identity.
	Authorizer authorizer.Authorizer
	// MaxExpiration bounds the lifetime of a credential.
	MaxExpiration time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

var (
	_ rest.NamedCreater             = &REST{}
	_ rest.GroupVersionKindProvider = &REST{}
	_ rest.Storage                  = &REST{}
)

// New returns an empty KubeconfigRequest.
func (r *REST) New() runtime.Object { return &operator.KubeconfigRequest{} }

// Destroy cleans up on shutdown; there is nothing to clean.
func (r *REST) Destroy() {}

// GroupVersionKind is the kind of the subresource's body in every version.
func (r *REST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return operatorv1alpha1.SchemeGroupVersion.WithKind("KubeconfigRequest")
}

// Create mints a credential for the request, as core TokenRequest does for tokens: the body
// must name the object of the URL, admission and validation run first, a dry run mints
// nothing, and the identity is the requester's unless it may impersonate another.
func (r *REST) Create(ctx context.Context, name string, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	req, ok := obj.(*operator.KubeconfigRequest)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a KubeconfigRequest: %T", obj))
	}
	out := req.DeepCopy()
	if err := store.BindToURL(ctx, name, &out.ObjectMeta); err != nil {
		return nil, err
	}
	out.Status = operator.KubeconfigRequestStatus{}
	if out.Spec.ExpirationSeconds == nil {
		out.Spec.ExpirationSeconds = ptr(operatorv1alpha1.DefaultExpirationSeconds)
	}
	if out.Spec.Workspace == "" {
		out.Spec.Workspace = operatorv1alpha1.DefaultWorkspace
	}
	if createValidation != nil {
		if err := createValidation(ctx, out.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	if errs := validation.ValidateKubeconfigRequest(out); len(errs) > 0 {
		return nil, apierrors.NewInvalid(operator.Kind("KubeconfigRequest"), name, errs)
	}

	target, err := r.Resolve(ctx, out.Namespace, name)
	if err != nil {
		return nil, err
	}
	requester, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewForbidden(r.Resource, name, fmt.Errorf("the request has no user"))
	}
	id, err := credentials.Resolve(ctx, r.Authorizer, requester, out.Spec.Username, out.Spec.Groups, r.subresource(), name)
	if err != nil {
		return nil, err
	}
	// What the request asked for is validated above; the requester's own name and groups,
	// which it takes when it asks for none, must fit a certificate too.
	if errs := validation.ValidateMintedIdentity(id.Username, id.Groups); len(errs) > 0 {
		return nil, apierrors.NewInvalid(operator.Kind("KubeconfigRequest"), name, errs)
	}

	if max := int64(r.maxExpiration().Seconds()); *out.Spec.ExpirationSeconds > max {
		warning.AddWarning(ctx, "", fmt.Sprintf("spec.expirationSeconds %d is above the server's maximum of %d; the credential expires after %s",
			*out.Spec.ExpirationSeconds, max, r.maxExpiration()))
		out.Spec.ExpirationSeconds = &max
	}
	if dryrun.IsDryRun(options.DryRun) {
		return out, nil
	}

	ca, bundle, err := r.CAs.For(target)
	if errors.Is(err, errNotSynced) {
		return nil, apierrors.NewServiceUnavailable(err.Error())
	}
	if err != nil {
		return nil, apierrors.NewConflict(r.Resource, name, err)
	}
	now := r.now()
	// The credential never outlives its CA (Mint), so a CA that is expired, or that expires
	// before the shortest lifetime a request may ask for, would give one that is already
	// expired, or nearly: it is refused until cert-manager renews the CA.
	if minLife := validation.MinKubeconfigRequestExpirationSeconds * time.Second; !ca.Cert.NotAfter.After(now.Add(minLife)) {
		what := "expires"
		if !ca.Cert.NotAfter.After(now) {
			what = "expired"
		}
		return nil, apierrors.NewConflict(r.Resource, name, fmt.Errorf(
			"the front-proxy-client CA %s of %s %s at %s (its NotAfter), within the shortest lifetime of a credential (%s): wait for cert-manager to renew it",
			target.SignerSecret(), target, what, ca.Cert.NotAfter.UTC().Format(time.RFC3339), minLife))
	}
	minted, err := ca.Mint(pkix.Name{CommonName: id.Username, Organization: id.Groups}, now, time.Duration(*out.Spec.ExpirationSeconds)*time.Second)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	kubeconfig, err := credentials.Kubeconfig(target, out.Spec.Workspace, bundle, minted.CertPEM, minted.KeyPEM)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	info := &operator.CertificateInfo{
		SerialNumber:      minted.Cert.SerialNumber.String(),
		SHA256Fingerprint: minted.Fingerprint(),
		Subject:           minted.Cert.Subject.String(),
	}
	audit.AddAuditAnnotations(ctx, AuditFingerprint, info.SHA256Fingerprint, AuditSerial, info.SerialNumber, AuditSubject, info.Subject)
	out.Status = operator.KubeconfigRequestStatus{
		Kubeconfig:          string(kubeconfig),
		ExpirationTimestamp: metav1.NewTime(minted.Cert.NotAfter),
		Certificate:         info,
	}
	return out, nil
}

// subresource is the resource the request was authorized on, for messages.
func (r *REST) subresource() schema.GroupResource {
	return schema.GroupResource{Group: r.Resource.Group, Resource: r.Resource.Resource + "/kubeconfig"}
}

func (r *REST) maxExpiration() time.Duration {
	if r.MaxExpiration <= 0 {
		return DefaultMaxExpiration
	}
	return r.MaxExpiration
}

func (r *REST) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func ptr[T any](v T) *T { return &v }
