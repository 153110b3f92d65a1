package validation

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func tooLong(path string, detail ...string) wantErr {
	return wantErr{typ: field.ErrorTypeTooLong, field: path, detail: strings.Join(detail, "")}
}

func tooMany(path string, detail ...string) wantErr {
	return wantErr{typ: field.ErrorTypeTooMany, field: path, detail: strings.Join(detail, "")}
}

func groupNames(n int) []string {
	groups := make([]string, n)
	for i := range groups {
		groups[i] = fmt.Sprintf("g%d", i)
	}
	return groups
}

// identityCases are the bounds of a requested identity, the same for a Kubeconfig and for a
// request to the kubeconfig subresource.
var identityCases = []struct {
	name     string
	username string
	groups   []string
	want     []wantErr
}{
	{name: "username at the maximum", username: strings.Repeat("u", 64)},
	{name: "username of 65 bytes", username: strings.Repeat("u", 65),
		want: []wantErr{tooLong("spec.username", "may not be more than 64 bytes, not 65: a certificate's subject")}},
	{name: "username of 64 bytes in 32 characters", username: strings.Repeat("ü", 32)},
	{name: "username of 66 bytes in 33 characters", username: strings.Repeat("ü", 33),
		want: []wantErr{tooLong("spec.username", "not 66")}},
	{name: "NUL in the username", username: "ad\x00min",
		want: []wantErr{invalid("spec.username", "U+0000 at byte 2")}},
	{name: "bidi override in the username", username: "admin\u202egpj",
		want: []wantErr{invalid("spec.username", "U+202E")}},
	{name: "zero width joiner in a group", username: "admin", groups: []string{"team\u200d-a"},
		want: []wantErr{invalid("spec.groups[0]", "U+200D")}},
	{name: "escape in a group", username: "admin", groups: []string{"ok", "a\x1b[31m"},
		want: []wantErr{invalid("spec.groups[1]", "U+001B")}},
	{name: "invalid UTF-8 in a group", username: "admin", groups: []string{"a\xffb"},
		want: []wantErr{invalid("spec.groups[0]", "UTF-8")}},
	{name: "spaces and punctuation print", username: "Jane Doe <jane@example.com>", groups: []string{"team a/ops", "system:kcp:admin"}},
	{name: "32 groups", username: "admin", groups: groupNames(32)},
	{name: "33 groups", username: "admin", groups: groupNames(33),
		want: []wantErr{tooMany("spec.groups", "must have at most 32 items")}},
	{name: "5000 groups, duplicates and empty ones: one error, not 5000", username: "admin", groups: append(append(groupNames(5000), groupNames(2000)...), ""),
		want: []wantErr{tooMany("spec.groups")}},
	{name: "group at the maximum", username: "admin", groups: []string{strings.Repeat("g", 64)}},
	{name: "group of 65 bytes", username: "admin", groups: []string{"ok", strings.Repeat("g", 65)},
		want: []wantErr{tooLong("spec.groups[1]", "not 65")}},
	{name: "trailing whitespace is one fault", username: "admin\t",
		want: []wantErr{invalid("spec.username", "whitespace")}},
}

func TestValidateKubeconfigIdentity(t *testing.T) {
	for _, tc := range identityCases {
		t.Run(tc.name, func(t *testing.T) {
			kc := validKubeconfig()
			kc.Spec.Username, kc.Spec.Groups = tc.username, tc.groups
			assertErrors(t, tc.want, ValidateKubeconfig(kc))

			// An update is held to the bounds when the identity changes.
			oldObj := validKubeconfig()
			oldObj.ObjectMeta, kc.ObjectMeta = updatedObjectMeta("admin"), updatedObjectMeta("admin")
			assertErrors(t, tc.want, ValidateKubeconfigUpdate(kc, oldObj))
		})
	}
}

func TestValidateKubeconfigRequestIdentity(t *testing.T) {
	for _, tc := range identityCases {
		t.Run(tc.name, func(t *testing.T) {
			req := &operator.KubeconfigRequest{Spec: operator.KubeconfigRequestSpec{
				ExpirationSeconds: ptr[int64](3600), Username: tc.username, Groups: tc.groups}}
			assertErrors(t, tc.want, ValidateKubeconfigRequest(req))
		})
	}
}

// TestValidateKubeconfigIdentityRatchets: a Kubeconfig stored before the bounds keeps its
// identity through updates of anything else, its finalizers' removal included.
func TestValidateKubeconfigIdentityRatchets(t *testing.T) {
	oldObj := validKubeconfig()
	oldObj.ObjectMeta = updatedObjectMeta("admin")
	oldObj.Spec.Username, oldObj.Spec.Groups = strings.Repeat("u", 89), groupNames(40)
	newObj := oldObj.DeepCopy()
	newObj.Finalizers = nil
	newObj.Spec.SecretRef.Name = "moved"
	assertErrors(t, nil, ValidateKubeconfigUpdate(newObj, oldObj))

	newObj.Spec.Groups = groupNames(41)
	assertErrors(t, []wantErr{tooMany("spec.groups"), tooLong("spec.username")}, ValidateKubeconfigUpdate(newObj, oldObj))
}

func TestValidateMintedIdentity(t *testing.T) {
	assert.Empty(t, ValidateMintedIdentity("system:serviceaccount:team-a:ci", []string{"system:serviceaccounts", "system:serviceaccounts:team-a"}))
	assertErrors(t, []wantErr{tooLong("spec.username", "the requester's own username: may not be more than 64 bytes")},
		ValidateMintedIdentity("system:serviceaccount:"+strings.Repeat("n", 40)+":"+strings.Repeat("s", 40), nil))
	assertErrors(t, []wantErr{tooMany("spec.groups", "the requester's own groups")}, ValidateMintedIdentity("jane", groupNames(33)))
	assertErrors(t, []wantErr{invalid("spec.groups[1]", "one of the requester's own groups: must consist of printable characters: the character U+202E")},
		ValidateMintedIdentity("jane", []string{"ok", "x\u202e"}))
}

func TestKubeconfigMaxValidityIsAWarning(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		name     string
		max      time.Duration
		validity time.Duration
		want     string
	}{
		{name: "the default maximum", validity: 30 * day},
		{name: "above the default maximum", validity: 30*day + time.Second,
			want: "spec.validity: 720h0m1s is above the server's maximum (--max-kubeconfig-validity): the certificate is issued for 720h0m0s and renewed as usual"},
		{name: "kcp-operator's samples", validity: 8766 * time.Hour, want: "the certificate is issued for 720h0m0s"},
		{name: "a configured maximum", max: 365 * day, validity: 365 * day},
		{name: "above a configured maximum", max: 2 * day, validity: 3 * day, want: "the certificate is issued for 48h0m0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := KubeconfigValidation{MaxValidity: tc.max}
			kc := validKubeconfig()
			kc.Spec.Validity = metav1.Duration{Duration: tc.validity}
			assertErrors(t, nil, v.Validate(kc))
			oldObj := validKubeconfig()
			oldObj.ObjectMeta, kc.ObjectMeta = updatedObjectMeta("admin"), updatedObjectMeta("admin")
			assertErrors(t, nil, v.ValidateUpdate(kc, oldObj))
			warnings := v.Warnings(kc)
			if tc.want == "" {
				assert.Empty(t, warnings)
				return
			}
			require.Len(t, warnings, 1)
			assert.Contains(t, warnings[0], tc.want)
		})
	}
}
