package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateExtras(t *testing.T) {
	vol := func(name string) corev1.Volume { return corev1.Volume{Name: name} }
	mount := func(name, path string) corev1.VolumeMount { return corev1.VolumeMount{Name: name, MountPath: path} }
	tests := []struct {
		name    string
		args    []string
		volumes []corev1.Volume
		mounts  []corev1.VolumeMount
		want    []wantErr
	}{
		{name: "absent"},
		{
			name:    "valid",
			args:    []string{"--feature-gates=X=true", "-v=4"},
			volumes: []corev1.Volume{vol("a"), vol("b")},
			mounts:  []corev1.VolumeMount{mount("a", "/var/a"), mount("b", "/etc/kcp-extra"), mount("a", "/etc/other")},
		},
		{
			name: "args that are not flags",
			args: []string{"--v=2", "", "value"},
			want: []wantErr{invalid("spec.extraArgs[1]"), invalid("spec.extraArgs[2]", "must be a flag starting with '-'")},
		},
		{
			name:    "bad volume names",
			volumes: []corev1.Volume{vol(""), vol("Data"), vol("data"), vol("data")},
			want: []wantErr{
				required("spec.extraVolumes[0].name"), invalid("spec.extraVolumes[1].name"),
				duplicate("spec.extraVolumes[3].name"),
			},
		},
		{
			name:    "mount of an unknown volume",
			volumes: []corev1.Volume{vol("a")},
			mounts:  []corev1.VolumeMount{mount("", "/a"), mount("b", "/b")},
			want:    []wantErr{required("spec.extraVolumeMounts[0].name"), notFound("spec.extraVolumeMounts[1].name")},
		},
		{
			name:    "bad mount paths",
			volumes: []corev1.Volume{vol("a")},
			mounts:  []corev1.VolumeMount{mount("a", ""), mount("a", "var/a"), mount("a", "/var/a"), mount("a", "/var/a/")},
			want: []wantErr{
				required("spec.extraVolumeMounts[0].mountPath"), invalid("spec.extraVolumeMounts[1].mountPath", "must be an absolute path"),
				duplicate("spec.extraVolumeMounts[3].mountPath"),
			},
		},
		{
			name:    "mounts in the reserved directory",
			volumes: []corev1.Volume{vol("a")},
			mounts:  []corev1.VolumeMount{mount("a", "/etc/kcp"), mount("a", "/etc/kcp/tls/server"), mount("a", "/etc/../etc/kcp/x")},
			want: []wantErr{
				invalid("spec.extraVolumeMounts[0].mountPath", "reserved for the mounts the server manages"),
				invalid("spec.extraVolumeMounts[1].mountPath"), invalid("spec.extraVolumeMounts[2].mountPath"),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, validateExtras(tc.args, tc.volumes, tc.mounts, field.NewPath("spec")))
		})
	}
}
