package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func TestValidateImage(t *testing.T) {
	tests := []struct {
		name  string
		image *operator.ImageSpec
		want  []wantErr
	}{
		{name: "absent"},
		{name: "empty: the defaults apply", image: &operator.ImageSpec{}},
		{name: "registry with port", image: &operator.ImageSpec{Repository: "registry.local:5000/kcp/kcp", Tag: "v0.29.0-rc.1_amd64"}},
		{name: "longest tag", image: &operator.ImageSpec{Tag: strings.Repeat("t", 128)}},
		{
			name:  "whitespace in repository",
			image: &operator.ImageSpec{Repository: "ghcr.io/kcp-dev/kcp "},
			want:  []wantErr{invalid("spec.image.repository", "may not contain whitespace")},
		},
		{
			name:  "tag starting with a dot",
			image: &operator.ImageSpec{Tag: ".v1"},
			want:  []wantErr{invalid("spec.image.tag", "must be a valid image tag")},
		},
		{
			name:  "tag too long",
			image: &operator.ImageSpec{Tag: strings.Repeat("t", 129)},
			want:  []wantErr{invalid("spec.image.tag")},
		},
		{
			name:  "tag with a digest",
			image: &operator.ImageSpec{Tag: "v1@sha256:abc"},
			want:  []wantErr{invalid("spec.image.tag")},
		},
		{
			name:  "bad pull secrets",
			image: &operator.ImageSpec{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "ok"}, {Name: ""}, {Name: "Pull"}}},
			want:  []wantErr{required("spec.image.imagePullSecrets[1].name"), invalid("spec.image.imagePullSecrets[2].name")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, validateImage(tc.image, field.NewPath("spec", "image")))
		})
	}
}
