package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
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
			// kcp-operator's users write a flag and its value as two entries.
			name: "a flag and its value as two entries",
			args: []string{"--encryption-provider-config", "/etc/kcp/encryption/config.yaml", "-v", "4", "--feature-gates=A=true", "--x", "-1"},
		},
		{
			name: "values that follow no flag",
			args: []string{"value", "--foo=bar", "baz", "--profiling", "true", "again"},
			want: []wantErr{
				invalid("spec.extraArgs[0]", "or the value of a flag without '=' just before it"),
				invalid("spec.extraArgs[2]"), invalid("spec.extraArgs[5]"),
			},
		},
		{
			name: "the end of the flags",
			args: []string{"--", "--foo", "-", "bar"},
			want: []wantErr{invalid("spec.extraArgs[0]", "must be a flag with a name"), invalid("spec.extraArgs[2]"), invalid("spec.extraArgs[3]")},
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
			name:    "mounts at, under and above a reserved directory",
			volumes: []corev1.Volume{vol("a")},
			mounts: []corev1.VolumeMount{
				mount("a", "/etc/kcp/tls"), mount("a", "/etc/kcp/tls/server"), mount("a", "/etc/../etc/kcp/tls/x"),
				mount("a", "/etc/kcp"), mount("a", "/"), mount("a", "/etc/kcp/client-kubeconfig/"), mount("a", "/etc/kcp/audit/policy"),
			},
			want: []wantErr{
				invalid("spec.extraVolumeMounts[0].mountPath", "may not be at, under or above /etc/kcp/tls: the server mounts what it manages there"),
				invalid("spec.extraVolumeMounts[1].mountPath", "/etc/kcp/tls"),
				invalid("spec.extraVolumeMounts[2].mountPath", "/etc/kcp/tls"),
				invalid("spec.extraVolumeMounts[3].mountPath", "/etc/kcp/tls"),
				invalid("spec.extraVolumeMounts[4].mountPath", "/etc/kcp/tls"),
				invalid("spec.extraVolumeMounts[5].mountPath", "/etc/kcp/client-kubeconfig"),
				invalid("spec.extraVolumeMounts[6].mountPath", "/etc/kcp/audit"),
			},
		},
		{
			// kcp-operator users mount their encryption configuration here.
			name:    "next to the reserved directories",
			volumes: []corev1.Volume{vol("a"), vol("b")},
			mounts:  []corev1.VolumeMount{mount("a", "/etc/kcp/encryption"), mount("b", "/etc/kcp/tls-extra")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, validateExtras(tc.args, tc.volumes, tc.mounts, mountpaths.KcpServer(), field.NewPath("spec")))
		})
	}
}

// TestEveryKindReservesItsOwnMounts checks that each kind refuses extra mounts over what the
// controllers mount into its container, and only that: /etc/kcp/encryption is free on a
// shard, and a front proxy or cache server does not inherit a shard's directories.
func TestEveryKindReservesItsOwnMounts(t *testing.T) {
	mounts := func(paths ...string) []corev1.VolumeMount {
		var out []corev1.VolumeMount
		for _, p := range paths {
			out = append(out, corev1.VolumeMount{Name: "extra", MountPath: p})
		}
		return out
	}
	rs, s, fp, cs := validRootShard(), validShard(), validFrontProxy(), validCacheServer()
	rs.Spec.ExtraVolumeMounts = mounts("/etc/kcp/encryption", "/etc/kcp/tls/ca")
	s.Spec.ExtraVolumeMounts = mounts("/etc/kcp/encryption", "/etc/etcd")
	fp.Spec.ExtraVolumeMounts = mounts("/etc/kcp/audit", "/etc/kcp-front-proxy/config")
	fp.Spec.AdditionalPathMappings = nil // their files are in the mounts replaced here
	cs.Spec.ExtraVolumeMounts = mounts("/etc/kcp/tls", "/var/etcd")
	for kind, tc := range map[string]struct {
		errs field.ErrorList
		dir  string
	}{
		"RootShard":   {ValidateRootShard(rs), "/etc/kcp/tls"},
		"Shard":       {ValidateShard(s), "/etc/etcd/tls"},
		"FrontProxy":  {ValidateFrontProxy(fp), "/etc/kcp-front-proxy"},
		"CacheServer": {ValidateCacheServer(cs), "/var/etcd"},
	} {
		t.Run(kind, func(t *testing.T) {
			assertErrors(t, []wantErr{invalid("spec.extraVolumeMounts[1].mountPath", "at, under or above "+tc.dir)}, tc.errs)
		})
	}
}
