package workload

import (
	"sort"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// Mount is a Secret, or a ConfigMap, mounted read-only into a component's container. Every
// component's volumes are a list of them, which reaches the controller's write of its
// Deployment as it is: the Secrets whose change rolls its pods (Rolls), those its Deployment
// waits for (Waited) and those the watch of users' Secrets follows (User) all derive from it.
type Mount struct {
	// Volume is the volume's name in the pod.
	Volume string
	// Secret is the mounted Secret's name; ConfigMap, when set instead, the ConfigMap's.
	Secret, ConfigMap string
	// Dir is where the volume is mounted.
	Dir string
	// Keys, when set, are the only keys projected, each to a file of its name: a CA's
	// tls.crt, never its key, and the one file a flag reads of a user's Secret.
	Keys []string
	// User marks a Secret (or ConfigMap) the user provides: the Deployment does not wait
	// for it, the watch of users' Secrets follows it, and its author must be able to read it.
	User bool
	// Field is the path of the API field that names a User mount's Secret, dotted, below the
	// setting its function reads (caFileRef of auth.oidc is "oidc.caFileRef" to OIDC(auth)):
	// the admission check holds that field to reading the Secret.
	Field string
	// Optional marks a Secret of the server's that the Deployment does not wait for: another
	// shard's service-account key, say, which a new shard of the setup brings later.
	Optional bool
}

// Feature is what one setting of a spec adds to a component's pod: its flags and its mounts.
// One function per setting builds it, so that a walk from the setting's API field to its flag,
// its mount and the roll when its Secret changes stays in that function.
type Feature struct {
	Args   []string
	Mounts []Mount
}

// Features joins features in order: their flags, then their mounts, each in that order.
func Features(fs ...Feature) Feature {
	var out Feature
	for _, f := range fs {
		out.Args = append(out.Args, f.Args...)
		out.Mounts = append(out.Mounts, f.Mounts...)
	}
	return out
}

// Waited reports whether the Deployment waits for the mount's Secret or ConfigMap: the server
// or cert-manager writes it for the component itself.
func (m Mount) Waited() bool { return !m.User && !m.Optional }

// Rolls reports whether a change to the mount's Secret or ConfigMap rolls the pods: every
// Secret, and a ConfigMap the server writes. A user's ConfigMap is not in the cache of the
// server's own, so it is not followed.
func (m Mount) Rolls() bool { return m.Secret != "" || m.ConfigMap != "" && m.Waited() }

// RollOnly are Secrets of the user's that the pods use otherwise than through a volume of
// the builder's, such as the user's extra volumes, or that a mounted bundle is made of: no
// volume, but each rolls the pods when it changes, and the Deployment waits for none.
func RollOnly(secrets ...string) []Mount {
	ms := make([]Mount, 0, len(secrets))
	for _, s := range secrets {
		ms = append(ms, Mount{Secret: s, User: true})
	}
	return ms
}

// AsVolume is the mount's volume.
func (m Mount) AsVolume() *corev1ac.VolumeApplyConfiguration {
	if m.ConfigMap != "" {
		return corev1ac.Volume().WithName(m.Volume).WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(m.ConfigMap))
	}
	src := corev1ac.SecretVolumeSource().WithSecretName(m.Secret)
	for _, k := range m.Keys {
		src.WithItems(corev1ac.KeyToPath().WithKey(k).WithPath(k))
	}
	return corev1ac.Volume().WithName(m.Volume).WithSecret(src)
}

// AsVolumeMount is the mount's read-only volume mount.
func (m Mount) AsVolumeMount() *corev1ac.VolumeMountApplyConfiguration {
	return corev1ac.VolumeMount().WithName(m.Volume).WithMountPath(m.Dir).WithReadOnly(true)
}

// AddMounts adds the mounts' volumes to a pod and their volume mounts to its container.
func AddMounts(podSpec *corev1ac.PodSpecApplyConfiguration, c *corev1ac.ContainerApplyConfiguration, mounts []Mount) {
	for _, m := range mounts {
		if m.Volume == "" { // RollOnly
			continue
		}
		podSpec.WithVolumes(m.AsVolume())
		c.WithVolumeMounts(m.AsVolumeMount())
	}
}

// Secrets are the names of the Secrets of the mounts that keep selects, sorted and once
// each; nil when there are none.
func Secrets(mounts []Mount, keep func(Mount) bool) []string {
	var names []string
	for _, m := range mounts {
		if m.Secret != "" && keep(m) {
			names = append(names, m.Secret)
		}
	}
	return SortedSet(names)
}

// AnySecret keeps every mount of a Secret (Secrets).
func AnySecret(Mount) bool { return true }

// UsersSecret keeps the mounts of Secrets the user provides (Secrets).
func UsersSecret(m Mount) bool { return m.User }

// OptionalSecret keeps the mounts of the server's Secrets the Deployment does not wait for
// (Secrets).
func OptionalSecret(m Mount) bool { return m.Optional }

// WaitedSecret keeps the mounts of Secrets the Deployment waits for (Secrets).
func WaitedSecret(m Mount) bool { return m.Waited() }

// SortedSet sorts names and keeps each once; nil when there are none.
func SortedSet(names []string) []string {
	sort.Strings(names)
	out := names[:0]
	for i, n := range names {
		if i == 0 || n != names[i-1] {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
