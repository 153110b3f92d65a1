package home

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	cmfake "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/fake"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

var signing = Signing{Link: link.Declaration{Namespace: "a", Name: "eu-1", UID: "link-uid"}, Issuer: "root-server-ca",
	Request: []byte("csr"), Usages: pki.ServerAuth.KeyUsages(), Duration: 48 * time.Hour}

// TestCertificateRequest checks the CertificateRequest of a signature: in the Link's
// namespace, against the CA Issuer, with the policy's usages, owned by the Link by its UID.
func TestCertificateRequest(t *testing.T) {
	cr := CertificateRequest(signing)
	assert.Equal(t, "a", cr.Namespace)
	assert.Equal(t, "eu-1-link-", cr.GenerateName)
	assert.Equal(t, cmmeta.IssuerReference{Name: "root-server-ca", Kind: "Issuer", Group: "cert-manager.io"}, cr.Spec.IssuerRef)
	assert.Equal(t, pki.ServerAuth.KeyUsages(), cr.Spec.Usages)
	assert.Equal(t, &metav1.Duration{Duration: 48 * time.Hour}, cr.Spec.Duration)
	assert.False(t, cr.Spec.IsCA)
	assert.Equal(t, "link-uid", cr.Labels[pki.LabelOwnerUID])
	assert.Equal(t, "eu-1", cr.Labels[pki.OwnerLabel("link")])
	require.Len(t, cr.OwnerReferences, 1)
	assert.Equal(t, "Link", cr.OwnerReferences[0].Kind)
	assert.Equal(t, "link-uid", string(cr.OwnerReferences[0].UID))
	noDuration := signing
	noDuration.Duration = 0
	assert.Nil(t, CertificateRequest(noDuration).Spec.Duration)
}

func condition(typ cmv1.CertificateRequestConditionType, status cmmeta.ConditionStatus, reason string) cmv1.CertificateRequestCondition {
	return cmv1.CertificateRequestCondition{Type: typ, Status: status, Reason: reason}
}

// TestOutcome checks what a CertificateRequest came to.
func TestOutcome(t *testing.T) {
	for name, tc := range map[string]struct {
		status  cmv1.CertificateRequestStatus
		signed  bool
		denied  bool
		pending bool
	}{
		"pending":  {status: cmv1.CertificateRequestStatus{Conditions: []cmv1.CertificateRequestCondition{condition("Ready", "False", "Pending")}}, pending: true},
		"approved": {status: cmv1.CertificateRequestStatus{Conditions: []cmv1.CertificateRequestCondition{condition("Approved", "True", "")}}, pending: true},
		"signed": {status: cmv1.CertificateRequestStatus{Certificate: []byte("chain"), CA: []byte("ca"),
			Conditions: []cmv1.CertificateRequestCondition{condition("Ready", "True", "Issued")}}, signed: true},
		"denied":  {status: cmv1.CertificateRequestStatus{Conditions: []cmv1.CertificateRequestCondition{condition("Denied", "True", "")}}, denied: true},
		"invalid": {status: cmv1.CertificateRequestStatus{Conditions: []cmv1.CertificateRequestCondition{condition("InvalidRequest", "True", "")}}, denied: true},
		"failed":  {status: cmv1.CertificateRequestStatus{Conditions: []cmv1.CertificateRequestCondition{condition("Ready", "False", "Failed")}}, denied: true},
		"ready without a certificate": {status: cmv1.CertificateRequestStatus{Conditions: []cmv1.CertificateRequestCondition{condition("Ready", "True", "Issued")}},
			pending: true},
	} {
		resp, err := Outcome(&cmv1.CertificateRequest{Status: tc.status})
		switch {
		case tc.denied:
			assert.ErrorIs(t, err, ErrDenied, name)
		case tc.signed:
			require.NoError(t, err, name)
			assert.Equal(t, link.SignResponse{Certificate: []byte("chain"), CA: []byte("ca")}, resp, name)
		case tc.pending:
			require.NoError(t, err, name)
			assert.Empty(t, resp.Certificate, name)
		}
	}
}

// TestCertificateRequestsSign checks the one function that talks to cert-manager, over a
// fake clientset: the request is made, waited for, answered, and deleted whatever came of
// it; one never signed is ErrNotSignedYet after the timeout.
func TestCertificateRequestsSign(t *testing.T) {
	for name, tc := range map[string]struct {
		status cmv1.CertificateRequestStatus
		want   error
	}{
		"signed": {status: cmv1.CertificateRequestStatus{Certificate: []byte("chain"), CA: []byte("ca"),
			Conditions: []cmv1.CertificateRequestCondition{condition("Ready", "True", "Issued")}}},
		"denied":  {status: cmv1.CertificateRequestStatus{Conditions: []cmv1.CertificateRequestCondition{condition("Denied", "True", "")}}, want: ErrDenied},
		"pending": {want: ErrNotSignedYet},
	} {
		client := cmfake.NewSimpleClientset()
		var gets atomic.Int32
		client.PrependReactor("create", "certificaterequests", func(a clienttesting.Action) (bool, runtime.Object, error) {
			cr := a.(clienttesting.CreateAction).GetObject().(*cmv1.CertificateRequest)
			cr.Name = cr.GenerateName + "x"
			return false, nil, nil
		})
		client.PrependReactor("get", "certificaterequests", func(a clienttesting.Action) (bool, runtime.Object, error) {
			// Pending once, then the test's status.
			if gets.Add(1) == 1 {
				return false, nil, nil
			}
			return true, &cmv1.CertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "eu-1-link-x"}, Status: tc.status}, nil
		})
		resp, err := CertificateRequests{Client: client, Timeout: 300 * time.Millisecond, Poll: 10 * time.Millisecond}.Sign(context.Background(), signing)
		if tc.want != nil {
			assert.ErrorIs(t, err, tc.want, name)
		} else {
			require.NoError(t, err, name)
			assert.Equal(t, link.SignResponse{Certificate: []byte("chain"), CA: []byte("ca")}, resp, name)
		}
		var created, deleted int
		for _, a := range client.Actions() {
			switch a.GetVerb() {
			case "create":
				created++
				assert.Equal(t, "a", a.GetNamespace(), name)
			case "delete":
				deleted++
				assert.Equal(t, "eu-1-link-x", a.(clienttesting.DeleteAction).GetName(), name)
			}
		}
		assert.Equal(t, 1, created, name)
		assert.Equal(t, 1, deleted, name)
		left, err := client.CertmanagerV1().CertificateRequests("a").List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		assert.Empty(t, left.Items, name)
	}
}
