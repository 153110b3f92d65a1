package kubeconfigrequest

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/credentials"
)

// TestMintWithAnExpiringCA: a CA that is expired, or expires within the shortest lifetime of a
// credential (600s), answers 409 naming its NotAfter, rather than a certificate whose
// NotAfter is before its NotBefore.
func TestMintWithAnExpiringCA(t *testing.T) {
	r := newREST(t, false)
	ca, _, err := r.CAs.For(mustTarget(t, r))
	require.NoError(t, err)
	notAfter := ca.Cert.NotAfter
	for name, now := range map[string]time.Time{
		"expired":                    notAfter.Add(time.Hour),
		"expiring at this very time": notAfter,
		"within 600s":                notAfter.Add(-599 * time.Second),
		"at exactly 600s":            notAfter.Add(-600 * time.Second),
	} {
		t.Run(name, func(t *testing.T) {
			r.Now = func() time.Time { return now }
			ctx, _ := request(t, "alice")
			_, err := mint(t, r, ctx, operator.KubeconfigRequestSpec{})
			require.Error(t, err)
			assert.True(t, apierrors.IsConflict(err), "got %v", err)
			assert.Contains(t, err.Error(), "root-front-proxy-client-ca")
			assert.Contains(t, err.Error(), notAfter.UTC().Format(time.RFC3339)+" (its NotAfter)")
		})
	}

	r.Now = func() time.Time { return notAfter.Add(-601 * time.Second) }
	ctx, _ := request(t, "alice")
	out, err := mint(t, r, ctx, operator.KubeconfigRequestSpec{})
	require.NoError(t, err, "a CA that outlives the shortest credential mints one, cut at the CA's NotAfter")
	cert := certOf(t, out.Status.Kubeconfig)
	assert.True(t, cert.NotAfter.Equal(notAfter))
	assert.True(t, cert.NotBefore.Before(cert.NotAfter))
}

func mustTarget(t *testing.T, r *REST) credentials.Target {
	target, err := r.Resolve(t.Context(), "team-a", "root")
	require.NoError(t, err)
	return target
}

// TestMintedIdentityFitsACertificate: a request's identity is bounded before any
// SubjectAccessReview, and the requester's own, taken when the request names none, is bounded
// as well: a 422 naming the field, not a certificate kcp or cert-manager would refuse.
func TestMintedIdentityFitsACertificate(t *testing.T) {
	groups := make([]string, 5000)
	for i := range groups {
		groups[i] = "g" + strings.Repeat("x", i%10)
	}
	for name, tc := range map[string]struct {
		requester string
		groups    []string
		spec      operator.KubeconfigRequestSpec
		field     string
		detail    string
	}{
		"5000 groups asked":               {requester: "admin", spec: operator.KubeconfigRequestSpec{Groups: groups}, field: "spec.groups", detail: "must have at most 32 items"},
		"a username of 89 bytes asked":    {requester: "admin", spec: operator.KubeconfigRequestSpec{Username: strings.Repeat("u", 89)}, field: "spec.username", detail: "not 89"},
		"a bidi override asked":           {requester: "admin", spec: operator.KubeconfigRequestSpec{Groups: []string{"admins\u202e"}}, field: "spec.groups[0]", detail: "U+202E"},
		"the requester's own long name":   {requester: strings.Repeat("a", 65), field: "spec.username", detail: "the requester's own username"},
		"the requester's own many groups": {requester: "alice", groups: groups[:40], field: "spec.groups", detail: "the requester's own groups"},
		"the requester's own name with groups asked": {requester: strings.Repeat("a", 65), groups: []string{"team-a"},
			spec: operator.KubeconfigRequestSpec{Groups: []string{"team-a"}}, field: "spec.username", detail: "the requester's own username"},
	} {
		t.Run(name, func(t *testing.T) {
			r := newREST(t, false)
			ctx, _ := request(t, tc.requester, tc.groups...)
			_, err := mint(t, r, ctx, tc.spec)
			require.Error(t, err)
			var status apierrors.APIStatus
			require.ErrorAs(t, err, &status)
			assert.EqualValues(t, http.StatusUnprocessableEntity, status.Status().Code, "%v", err)
			require.NotNil(t, status.Status().Details)
			require.NotEmpty(t, status.Status().Details.Causes)
			assert.Equal(t, tc.field, status.Status().Details.Causes[0].Field)
			assert.Contains(t, err.Error(), tc.detail)
		})
	}
}
