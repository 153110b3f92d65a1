package validation

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// TestValidateLinkedUpdate: a linked consumer's link is immutable like ref and secretRef:
// its certificates are signed over that link, by that RootShard's CAs.
func TestValidateLinkedUpdate(t *testing.T) {
	linkedShard := func(bootstrap string) *operator.Shard {
		s := validShard()
		s.ObjectMeta = updatedObjectMeta("shard-a")
		s.Spec.RootShard = operator.RootShardConfig{Link: link(bootstrap)}
		return s
	}
	linkedFrontProxy := func(rs operator.RootShardConfig) *operator.FrontProxy {
		fp := validFrontProxy()
		fp.ObjectMeta = updatedObjectMeta("edge")
		fp.Spec.RootShard = rs
		return fp
	}
	linkedKubeconfig := func(bootstrap string) *operator.Kubeconfig {
		kc := validKubeconfig()
		kc.ObjectMeta = updatedObjectMeta("admin")
		kc.Spec.Target = operator.KubeconfigTarget{RootShardLink: link(bootstrap)}
		return kc
	}
	tests := []struct {
		name     string
		validate func() field.ErrorList
		want     []wantErr
	}{
		{
			name:     "Shard unchanged",
			validate: func() field.ErrorList { return (ValidateShardUpdate(linkedShard("a"), linkedShard("a"))) },
		},
		{
			name:     "Shard's bootstrap Secret renamed",
			validate: func() field.ErrorList { return (ValidateShardUpdate(linkedShard("b"), linkedShard("a"))) },
			want:     []wantErr{invalid("spec.rootShard.link.secretRef.name", "field is immutable")},
		},
		{
			name: "FrontProxy switched from a link to a ref",
			validate: func() field.ErrorList {
				return (ValidateFrontProxyUpdate(linkedFrontProxy(operator.RootShardConfig{Reference: ref("root")}),
					linkedFrontProxy(operator.RootShardConfig{Link: link("a")})))
			},
			want: []wantErr{invalid("spec.rootShard", "field is immutable")},
		},
		{
			name: "FrontProxy's bootstrap Secret renamed",
			validate: func() field.ErrorList {
				return (ValidateFrontProxyUpdate(linkedFrontProxy(operator.RootShardConfig{Link: link("b")}),
					linkedFrontProxy(operator.RootShardConfig{Link: link("a")})))
			},
			want: []wantErr{invalid("spec.rootShard.link.secretRef.name", "field is immutable")},
		},
		{
			name: "Kubeconfig's bootstrap Secret renamed",
			validate: func() field.ErrorList {
				return (ValidateKubeconfigUpdate(linkedKubeconfig("b"), linkedKubeconfig("a")))
			},
			want: []wantErr{invalid("spec.target", `Invalid value: "Link/b": field is immutable`)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, tc.validate())
		})
	}
}
