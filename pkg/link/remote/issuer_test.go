package remote

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	cmfake "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/fake"
	cminformers "github.com/cert-manager/cert-manager/pkg/client/informers/externalversions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// issuerFixture is the LinkIssuer over a fake cert-manager API holding cr and the
// Certificate, its caches filled by hand, signing through signer.
type issuerFixture struct {
	issuer *Issuer
	cm     *cmfake.Clientset
	key    string
	// requests is the CertificateRequests' cache.
	requests cache.Indexer
}

func newIssuerFixture(t *testing.T, cr *cmv1.CertificateRequest, signer func(types.NamespacedName) (Signer, error)) *issuerFixture {
	t.Helper()
	crt := shardCertificate()
	cm := cmfake.NewClientset(cr, crt)
	f := cminformers.NewSharedInformerFactory(cm, 0)
	requests := f.Certmanager().V1().CertificateRequests()
	require.NoError(t, requests.Informer().GetIndexer().Add(cr))
	certs := f.Certmanager().V1().Certificates()
	require.NoError(t, certs.Informer().GetIndexer().Add(crt))
	i, err := NewIssuer(cm, kubefake.NewClientset(nextKeySecret()), requests, certs.Lister(), appliedOf(crt), signer, testSources())
	require.NoError(t, err)
	key, err := cache.MetaNamespaceKeyFunc(cr)
	require.NoError(t, err)
	return &issuerFixture{issuer: i, cm: cm, key: key, requests: requests.Informer().GetIndexer()}
}

// appliedOf is an Applied that holds crts, as the host's Certificate applier records them.
func appliedOf(crts ...*cmv1.Certificate) *Applied {
	a := NewApplied()
	for _, c := range crts {
		a.Record(c)
	}
	return a
}

// sync syncs the request once, and returns what is stored of it after.
func (f *issuerFixture) sync(t *testing.T) (*cmv1.CertificateRequest, time.Duration, error) {
	t.Helper()
	after, err := f.issuer.sync(context.Background(), f.key)
	ns, name, _ := cache.SplitMetaNamespaceKey(f.key)
	cr, gerr := f.cm.CertmanagerV1().CertificateRequests(ns).Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, gerr)
	return cr, after, err
}

func (f *issuerFixture) statusWrites() int {
	n := 0
	for _, a := range f.cm.Actions() {
		if a.GetVerb() == "update" && a.GetSubresource() == "status" {
			n++
		}
	}
	return n
}

func condition(cr *cmv1.CertificateRequest, t cmv1.CertificateRequestConditionType) cmv1.CertificateRequestCondition {
	for _, c := range cr.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return cmv1.CertificateRequestCondition{}
}

// signedBy is a Signer of the link: a Client of a home whose sign route answers with code
// (and Retry-After), or, with 200, the chain.
func signedBy(t *testing.T, code int, deleting bool) func(types.NamespacedName) (Signer, error) {
	h := newHome(t, link.DefaultLimits, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req link.SignRequest
		require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
		assert.Equal(t, csrOfNext(), req.Request)
		assert.Equal(t, link.ConsumerRef{Namespace: "remote", Name: shardName, UID: shardUID}, req.Consumer)
		a, _ := link.AuthorizedFrom(r.Context())
		assert.Equal(t, link.Request{Operation: link.Sign, Kind: link.Shard, Role: pki.ServerCA}, a.Request)
		if code != http.StatusOK {
			if code == http.StatusServiceUnavailable {
				w.Header().Set("Retry-After", "7")
			}
			w.WriteHeader(code)
			return
		}
		writeJSON(w, link.SignResponse{Certificate: []byte("chain"), CA: []byte("ca")})
	}))
	h.deleting.Store(deleting)
	c := h.client(t)
	return func(key types.NamespacedName) (Signer, error) {
		assert.Equal(t, types.NamespacedName{Namespace: "remote", Name: bootstrapName}, key)
		return c, nil
	}
}

// TestIssuerSigns: a linked consumer's request is approved, signed over the link, and
// Ready with the chain.
func TestIssuerSigns(t *testing.T) {
	f := newIssuerFixture(t, linkedRequest(), signedBy(t, http.StatusOK, false))
	cr, after, err := f.sync(t)
	require.NoError(t, err)
	assert.Zero(t, after)
	assert.Equal(t, []byte("chain"), cr.Status.Certificate)
	assert.Equal(t, []byte("ca"), cr.Status.CA)
	assert.Equal(t, cmmeta.ConditionTrue, condition(cr, cmv1.CertificateRequestConditionApproved).Status)
	ready := condition(cr, cmv1.CertificateRequestConditionReady)
	assert.Equal(t, cmmeta.ConditionTrue, ready.Status)
	assert.Equal(t, cmv1.CertificateRequestReasonIssued, ready.Reason)
}

// TestIssuerOutcomes: the home's refusal fails a request for good, an outage leaves it
// Pending and retried, a request of no linked consumer is Denied.
func TestIssuerOutcomes(t *testing.T) {
	notLinked := func() *cmv1.CertificateRequest {
		cr := linkedRequest()
		cr.OwnerReferences = nil
		return cr
	}
	approved := func(cr *cmv1.CertificateRequest) *cmv1.CertificateRequest {
		cr.Status.Conditions = []cmv1.CertificateRequestCondition{{Type: cmv1.CertificateRequestConditionApproved, Status: cmmeta.ConditionTrue,
			Reason: "cert-manager.io"}}
		return cr
	}
	linkDown := func(types.NamespacedName) (Signer, error) { return nil, ErrNoLink }
	for _, tc := range []struct {
		name     string
		cr       *cmv1.CertificateRequest
		signer   func(*testing.T) func(types.NamespacedName) (Signer, error)
		reason   string
		denied   bool
		approved cmmeta.ConditionStatus
		failed   bool
		retry    bool
		after    time.Duration
	}{
		{name: "the home refuses (403): Failed, no retry", cr: linkedRequest(),
			signer: func(t *testing.T) func(types.NamespacedName) (Signer, error) { return signedBy(t, 0, true) },
			reason: cmv1.CertificateRequestReasonFailed, approved: cmmeta.ConditionTrue, failed: true},
		{name: "the home unavailable (503 with Retry-After): Pending, retried after it", cr: linkedRequest(),
			signer: func(t *testing.T) func(types.NamespacedName) (Signer, error) {
				return signedBy(t, http.StatusServiceUnavailable, false)
			},
			reason: cmv1.CertificateRequestReasonPending, approved: cmmeta.ConditionTrue, after: 7 * time.Second},
		{name: "the home failing (500): Pending, retried with backoff", cr: linkedRequest(),
			signer: func(t *testing.T) func(types.NamespacedName) (Signer, error) {
				return signedBy(t, http.StatusInternalServerError, false)
			},
			reason: cmv1.CertificateRequestReasonPending, approved: cmmeta.ConditionTrue, retry: true},
		{name: "the link not up: Pending, retried with backoff", cr: linkedRequest(),
			signer: func(*testing.T) func(types.NamespacedName) (Signer, error) { return linkDown },
			reason: cmv1.CertificateRequestReasonPending, approved: cmmeta.ConditionTrue, retry: true},
		{name: "no linked consumer's: Denied", cr: notLinked(),
			signer: func(*testing.T) func(types.NamespacedName) (Signer, error) { return linkDown },
			reason: cmv1.CertificateRequestReasonDenied, denied: true, failed: true},
		{name: "no linked consumer's, approved by another: Failed", cr: approved(notLinked()),
			signer: func(*testing.T) func(types.NamespacedName) (Signer, error) { return linkDown },
			reason: cmv1.CertificateRequestReasonFailed, approved: cmmeta.ConditionTrue, failed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newIssuerFixture(t, tc.cr, tc.signer(t))
			cr, after, err := f.sync(t)
			if tc.retry {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.after, after)
			assert.Empty(t, cr.Status.Certificate)
			ready := condition(cr, cmv1.CertificateRequestConditionReady)
			assert.Equal(t, cmmeta.ConditionFalse, ready.Status)
			assert.Equal(t, tc.reason, ready.Reason, ready.Message)
			assert.Equal(t, tc.denied, condition(cr, cmv1.CertificateRequestConditionDenied).Status == cmmeta.ConditionTrue)
			assert.Equal(t, tc.approved, condition(cr, cmv1.CertificateRequestConditionApproved).Status)
			assert.Equal(t, tc.failed, cr.Status.FailureTime != nil)
		})
	}
}

// TestIssuerWritesPendingOnce: a request still Pending for the same reason is not written
// again.
func TestIssuerWritesPendingOnce(t *testing.T) {
	f := newIssuerFixture(t, linkedRequest(), func(types.NamespacedName) (Signer, error) { return nil, ErrNoLink })
	cr, _, err := f.sync(t)
	require.True(t, errors.Is(err, ErrNoLink), "%v", err)
	require.Equal(t, 1, f.statusWrites())
	require.NoError(t, f.requests.Update(cr))
	_, _, err = f.sync(t)
	require.Error(t, err)
	assert.Equal(t, 1, f.statusWrites())
}

// TestIssuerRun: the issuer's informer and workers bring a request that names it to Ready,
// and leave another issuer's alone.
func TestIssuerRun(t *testing.T) {
	other := linkedRequest()
	other.Name = "other-issuers"
	other.Spec.IssuerRef = cmmeta.IssuerReference{Group: "cert-manager.io", Kind: "Issuer", Name: "ca"}
	cm := cmfake.NewClientset(shardCertificate(), other)
	f := cminformers.NewSharedInformerFactory(cm, 0)
	requests := f.Certmanager().V1().CertificateRequests()
	certs := f.Certmanager().V1().Certificates()
	i, err := NewIssuer(cm, kubefake.NewClientset(nextKeySecret()), requests, certs.Lister(), appliedOf(shardCertificate()),
		signedBy(t, http.StatusOK, false), testSources())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	f.Start(ctx.Done())
	go func() { defer close(done); _ = i.Run(ctx, 2) }()
	t.Cleanup(func() { cancel(); <-done; f.Shutdown() })

	_, err = cm.CertmanagerV1().CertificateRequests("remote").Create(ctx, linkedRequest(), metav1.CreateOptions{})
	require.NoError(t, err)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		cr, err := cm.CertmanagerV1().CertificateRequests("remote").Get(ctx, linkedRequest().Name, metav1.GetOptions{})
		require.NoError(c, err)
		assert.Equal(c, cmv1.CertificateRequestReasonIssued, condition(cr, cmv1.CertificateRequestConditionReady).Reason)
	}, 5*time.Second, 10*time.Millisecond)
	untouched, err := cm.CertmanagerV1().CertificateRequests("remote").Get(ctx, other.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, untouched.Status.Conditions)
}

// TestIssuerChecksWhatItApplied: a request of a Certificate this server did not apply (one
// forged with our labels) is Denied; one of a consumer this server has not applied since it
// started waits, retried, and is neither approved nor denied.
func TestIssuerChecksWhatItApplied(t *testing.T) {
	t.Run("forged", func(t *testing.T) {
		f := newIssuerFixture(t, linkedRequest(), signedBy(t, http.StatusOK, false))
		applied := shardCertificate()
		applied.Name, applied.UID = "eu-shard-client", "uid-client"
		f.issuer.applied = appliedOf(applied)
		cr, _, err := f.sync(t)
		require.NoError(t, err)
		assert.Empty(t, cr.Status.Certificate)
		denied := condition(cr, cmv1.CertificateRequestConditionDenied)
		assert.Equal(t, cmmeta.ConditionTrue, denied.Status)
		assert.Contains(t, denied.Message, "not one this server applied")
	})
	t.Run("not applied yet", func(t *testing.T) {
		f := newIssuerFixture(t, linkedRequest(), signedBy(t, http.StatusOK, false))
		f.issuer.applied = NewApplied()
		cr, _, err := f.sync(t)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "has not applied the Certificates")
		assert.Empty(t, cr.Status.Conditions)
		assert.Zero(t, f.statusWrites())
	})
	t.Run("a foreign key", func(t *testing.T) {
		cr := linkedRequest()
		cr.Spec.Request = strangerCSR()
		f := newIssuerFixture(t, cr, signedBy(t, http.StatusOK, false))
		cr, _, err := f.sync(t)
		require.NoError(t, err)
		assert.Empty(t, cr.Status.Certificate)
		assert.Equal(t, cmmeta.ConditionTrue, condition(cr, cmv1.CertificateRequestConditionDenied).Status)
	})
}
