package validation

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func TestValidateKubeconfigRequest(t *testing.T) {
	tests := []struct {
		name string
		spec operator.KubeconfigRequestSpec
		want []wantErr
	}{
		{
			name: "valid",
			spec: operator.KubeconfigRequestSpec{ExpirationSeconds: ptr[int64](3600), Username: "alice", Groups: []string{"team-a"}, Workspace: "root:team-a"},
		},
		{
			name: "defaults only",
			spec: operator.KubeconfigRequestSpec{ExpirationSeconds: ptr[int64](600)},
		},
		{
			name: "expirationSeconds not defaulted",
			spec: operator.KubeconfigRequestSpec{},
			want: []wantErr{required("spec.expirationSeconds")},
		},
		{
			name: "expirationSeconds too short",
			spec: operator.KubeconfigRequestSpec{ExpirationSeconds: ptr[int64](599)},
			want: []wantErr{invalid("spec.expirationSeconds", "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes")},
		},
		{
			// The same rule as a Kubeconfig's targetWorkspace.
			name: "logical cluster name",
			spec: operator.KubeconfigRequestSpec{ExpirationSeconds: ptr[int64](3600), Workspace: "2x8k4qzl9j1mvh5c"},
		},
		{
			name: "bad workspace",
			spec: operator.KubeconfigRequestSpec{ExpirationSeconds: ptr[int64](3600), Workspace: "root:Team"},
			want: []wantErr{invalid("spec.workspace")},
		},
		{
			name: "username with surrounding whitespace",
			spec: operator.KubeconfigRequestSpec{ExpirationSeconds: ptr[int64](3600), Username: " alice"},
			want: []wantErr{invalid("spec.username")},
		},
		{
			name: "empty and duplicate groups",
			spec: operator.KubeconfigRequestSpec{ExpirationSeconds: ptr[int64](3600), Groups: []string{"", "a", "a"}},
			want: []wantErr{required("spec.groups[0]"), duplicate("spec.groups[2]")},
		},
		{
			name: "every fault is reported",
			spec: operator.KubeconfigRequestSpec{ExpirationSeconds: ptr[int64](1), Workspace: "-x", Username: "a\t"},
			want: []wantErr{invalid("spec.expirationSeconds"), invalid("spec.workspace"), invalid("spec.username")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, ValidateKubeconfigRequest(&operator.KubeconfigRequest{Spec: tc.spec}))
		})
	}
}

func TestValidateKubeconfigRequestNil(t *testing.T) {
	assert.NotEmpty(t, ValidateKubeconfigRequest(nil))
}
