package validation

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func TestServiceOwnerNameFunc(t *testing.T) {
	tests := []struct {
		name string
		meta metav1.ObjectMeta
		want []wantErr
	}{
		{name: "name", meta: metav1.ObjectMeta{Name: "root", Namespace: "ns"}},
		{
			name: "generateName with a trailing dash",
			meta: metav1.ObjectMeta{Name: "root-x1y2z", GenerateName: "root-", Namespace: "ns"},
		},
		{
			name: "generateName not a DNS-1035 label",
			meta: metav1.ObjectMeta{Name: "root-x1y2z", GenerateName: "Root-", Namespace: "ns"},
			want: []wantErr{invalid("metadata.generateName")},
		},
		{name: "no name", meta: metav1.ObjectMeta{Namespace: "ns"}, want: []wantErr{required("metadata.name")}},
		{
			name: "upper case and too long: two faults",
			meta: metav1.ObjectMeta{Name: "A" + strings.Repeat("a", 60), Namespace: "ns"},
			want: []wantErr{invalid("metadata.name", "40 characters"), invalid("metadata.name", "DNS-1035 label")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := validRootShard()
			rs.ObjectMeta = tc.meta
			assertErrors(t, tc.want, ValidateRootShard(rs))
		})
	}
}

func TestValidateNonEmptyUniqueStrings(t *testing.T) {
	fldPath := field.NewPath("spec", "groups")
	assertErrors(t, nil, validateNonEmptyUniqueStrings([]string{"a", "b"}, fldPath))
	assertErrors(t, []wantErr{required("spec.groups[0]"), required("spec.groups[1]"), duplicate("spec.groups[3]")},
		validateNonEmptyUniqueStrings([]string{"", "", "a", "a"}, fldPath))
}

func TestValidateSecretReference(t *testing.T) {
	fldPath := field.NewPath("spec", "caBundleSecretRef")
	assertErrors(t, nil, validateSecretReference(nil, fldPath))
	assertErrors(t, nil, validateSecretReference(&corev1.LocalObjectReference{Name: "ca.bundle"}, fldPath))
	assertErrors(t, []wantErr{required("spec.caBundleSecretRef.name")}, validateSecretReference(&corev1.LocalObjectReference{}, fldPath))
}

func TestValidateImmutable(t *testing.T) {
	fldPath := field.NewPath("spec", "certificates")
	certs := func(name string) *operator.Certificates {
		return &operator.Certificates{IssuerRef: &operator.ObjectReference{Name: name, Kind: "Issuer", Group: "cert-manager.io"}}
	}
	assertErrors(t, nil, validateCertificatesUpdate(certs("ca"), certs("ca"), fldPath))
	assertErrors(t, nil, validateCertificatesUpdate(nil, nil, fldPath))
	errs := validateCertificatesUpdate(certs("other"), certs("ca"), fldPath)
	assertErrors(t, []wantErr{invalid("spec.certificates", "field is immutable")}, errs)
	assert.Equal(t, `spec.certificates: Invalid value: "issuerRef Issuer/other": field is immutable`, errs[0].Error())
}
