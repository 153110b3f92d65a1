package localstack

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// podVolumes are what a pod's volumes show when the harness runs one of its containers as a
// process: the Secrets and ConfigMaps they name, as the cluster holds them, and a directory
// for each claim.
type podVolumes struct {
	volumes    []corev1.Volume
	secrets    map[string]*corev1.Secret
	configMaps map[string]*corev1.ConfigMap
	// templates are a StatefulSet's claim templates: a mount of one is a directory of the
	// pod's own, as an emptyDir is.
	templates map[string]bool
	// claimDir is the directory of a claim a volume names (persistentVolumeClaim), which
	// outlives the pod as the claim would; nil when the harness runs none.
	claimDir func(claim string) (string, error)
}

// writeVolumes writes what each of the container's mounts would show into dir/volumes, and
// returns the local directory of each mount path: a Secret's or ConfigMap's keys (its items
// only, under their paths, when it lists them), a directory of the pod's own for a claim
// template or an emptyDir, and the claim's directory for a claim. Containers of one pod
// share the directories of the same volume, as they do in the pod.
func writeVolumes(dir string, pv podVolumes, c *corev1.Container) (map[string]string, error) {
	volumes := map[string]*corev1.Volume{}
	for i := range pv.volumes {
		v := &pv.volumes[i]
		volumes[v.Name] = v
	}
	mounts := map[string]string{}
	for _, vm := range c.VolumeMounts {
		if vm.SubPath != "" && (strings.HasPrefix(vm.SubPath, "/") || slices.Contains(strings.Split(vm.SubPath, "/"), "..")) {
			return nil, fmt.Errorf("volume mount %s has a subPath that leaves the volume", vm.Name)
		}
		root := filepath.Join(dir, "volumes", vm.Name)
		v, isVolume := volumes[vm.Name]
		switch {
		case isVolume && v.Secret != nil:
			s := pv.secrets[v.Secret.SecretName]
			if s == nil {
				if !isOptional(v.Secret.Optional) {
					return nil, fmt.Errorf("volume %s mounts Secret %s, which was not given", vm.Name, v.Secret.SecretName)
				}
				s = &corev1.Secret{}
			}
			if err := writeKeyedVolume(root, "Secret "+v.Secret.SecretName, v.Secret.Items, v.Secret.Optional, s.Data); err != nil {
				return nil, fmt.Errorf("volume %s: %w", vm.Name, err)
			}
		case isVolume && v.ConfigMap != nil:
			cm := pv.configMaps[v.ConfigMap.Name]
			if cm == nil {
				if !isOptional(v.ConfigMap.Optional) {
					return nil, fmt.Errorf("volume %s mounts ConfigMap %s, which was not given", vm.Name, v.ConfigMap.Name)
				}
				cm = &corev1.ConfigMap{}
			}
			data := map[string][]byte{}
			for k, value := range cm.Data {
				data[k] = []byte(value)
			}
			for k, value := range cm.BinaryData {
				data[k] = value
			}
			if err := writeKeyedVolume(root, "ConfigMap "+v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional, data); err != nil {
				return nil, fmt.Errorf("volume %s: %w", vm.Name, err)
			}
		case isVolume && v.PersistentVolumeClaim != nil && pv.claimDir != nil:
			claim, err := pv.claimDir(v.PersistentVolumeClaim.ClaimName)
			if err != nil {
				return nil, fmt.Errorf("volume %s: %w", vm.Name, err)
			}
			root = claim
			if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(vm.SubPath)), 0o700); err != nil {
				return nil, err
			}
		case isVolume && v.EmptyDir != nil, !isVolume && pv.templates[vm.Name]:
			// A directory of the pod's own, which outlives its process as a claim would.
			if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(vm.SubPath)), 0o700); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("volume %s is neither a Secret, a ConfigMap, an emptyDir nor a claim the harness runs", vm.Name)
		}
		mounts[path.Clean(vm.MountPath)] = filepath.Join(root, filepath.FromSlash(vm.SubPath))
	}
	return mounts, nil
}

func isOptional(o *bool) bool { return o != nil && *o }

// writeKeyedVolume writes a Secret's or ConfigMap's keys as kubelet projects them: every key,
// or only the items, under their paths.
func writeKeyedVolume(root, what string, items []corev1.KeyToPath, optional *bool, data map[string][]byte) error {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return err
	}
	files := map[string][]byte{}
	if len(items) == 0 {
		for k, value := range data {
			files[k] = value
		}
	}
	for _, item := range items {
		value, ok := data[item.Key]
		if !ok {
			if isOptional(optional) {
				continue
			}
			return fmt.Errorf("%s has no key %s", what, item.Key)
		}
		files[item.Path] = value
	}
	for p, value := range files {
		if strings.HasPrefix(p, "/") || slices.Contains(strings.Split(p, "/"), "..") {
			return fmt.Errorf("%s's path %s leaves the volume", what, p)
		}
		if err := WriteFiles(map[string][]byte{filepath.Join(root, filepath.FromSlash(p)): value}); err != nil {
			return err
		}
	}
	return nil
}

// containerEnv is the environment kubelet gives a container, as NAME=value, and the variables
// it expands in command and args: the container's env in order, each value expanded with
// those before it; a fieldRef to the pod's name or namespace; a key of a given Secret or
// ConfigMap. Anything else (envFrom, another field, a resource) is refused.
func containerEnv(c *corev1.Container, namespace, pod string, secrets map[string]*corev1.Secret, configMaps map[string]*corev1.ConfigMap) (map[string]string, []string, error) {
	if len(c.EnvFrom) > 0 {
		return nil, nil, fmt.Errorf("the container %s takes environment from envFrom, which the harness does not map", c.Name)
	}
	vars := map[string]string{}
	var env []string
	for _, e := range c.Env {
		var v string
		switch from := e.ValueFrom; {
		case from == nil:
			expanded, err := expandVars(e.Value, vars)
			if err != nil {
				return nil, nil, err
			}
			v = expanded
		case from.FieldRef != nil && from.FieldRef.FieldPath == "metadata.name":
			v = pod
		case from.FieldRef != nil && from.FieldRef.FieldPath == "metadata.namespace":
			v = namespace
		case from.SecretKeyRef != nil:
			s, ok := secrets[from.SecretKeyRef.Name]
			data, found := []byte(nil), false
			if ok {
				data, found = s.Data[from.SecretKeyRef.Key]
			}
			if !found {
				if isOptional(from.SecretKeyRef.Optional) {
					continue
				}
				return nil, nil, fmt.Errorf("%s is key %s of Secret %s, which was not given", e.Name, from.SecretKeyRef.Key, from.SecretKeyRef.Name)
			}
			v = string(data)
		case from.ConfigMapKeyRef != nil:
			cm, ok := configMaps[from.ConfigMapKeyRef.Name]
			value, found := "", false
			if ok {
				value, found = cm.Data[from.ConfigMapKeyRef.Key]
			}
			if !found {
				if isOptional(from.ConfigMapKeyRef.Optional) {
					continue
				}
				return nil, nil, fmt.Errorf("%s is key %s of ConfigMap %s, which was not given", e.Name, from.ConfigMapKeyRef.Key, from.ConfigMapKeyRef.Name)
			}
			v = value
		default:
			return nil, nil, fmt.Errorf("%s comes from a source the harness does not map", e.Name)
		}
		vars[e.Name] = v
		env = append(env, e.Name+"="+v)
	}
	return vars, env, nil
}
