package workload

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// toApply converts a core type into its apply configuration through JSON, which both share
// field for field. The input comes from a validated object, so it always converts.
func toApply[AC any, T any](in *T) *AC {
	data, err := json.Marshal(in)
	if err != nil {
		return new(AC)
	}
	out := new(AC)
	if err := json.Unmarshal(data, out); err != nil {
		return new(AC)
	}
	return out
}

// Volume is the apply configuration of a user's extra volume.
func Volume(v *corev1.Volume) *corev1ac.VolumeApplyConfiguration {
	return toApply[corev1ac.VolumeApplyConfiguration](v)
}

// VolumeMount is the apply configuration of a user's extra volume mount.
func VolumeMount(m *corev1.VolumeMount) *corev1ac.VolumeMountApplyConfiguration {
	return toApply[corev1ac.VolumeMountApplyConfiguration](m)
}
