package framework

import (
	"context"
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodFiles reads a Deployment as its pods would run: the first container's arguments, and
// the files its Secret and ConfigMap volumes mount, by path (a Secret's or ConfigMap's keys,
// or only the items a volume names). A stand-in started from them (StartFrontProxyDouble)
// runs what the controllers realized, flags and mounts included.
func (s *Stack) PodFiles(ctx context.Context, namespace, deployment string) ([]string, map[string][]byte, error) {
	d, err := s.Kube.AppsV1().Deployments(namespace).Get(ctx, deployment, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	pod := d.Spec.Template.Spec
	if len(pod.Containers) == 0 {
		return nil, nil, fmt.Errorf("the Deployment %s has no container", deployment)
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	files := map[string][]byte{}
	for _, m := range pod.Containers[0].VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			return nil, nil, fmt.Errorf("the mount %s names no volume", m.MountPath)
		}
		data := map[string][]byte{}
		var items []corev1.KeyToPath
		switch {
		case v.Secret != nil:
			secret, err := s.Kube.CoreV1().Secrets(namespace).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
			if err != nil {
				return nil, nil, err
			}
			data, items = secret.Data, v.Secret.Items
		case v.ConfigMap != nil:
			cm, err := s.Kube.CoreV1().ConfigMaps(namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				return nil, nil, err
			}
			for k, value := range cm.Data {
				data[k] = []byte(value)
			}
			items = v.ConfigMap.Items
		default:
			continue
		}
		if len(items) == 0 {
			for k := range data {
				items = append(items, corev1.KeyToPath{Key: k, Path: k})
			}
		}
		for _, item := range items {
			files[path.Join(m.MountPath, item.Path)] = data[item.Key]
		}
	}
	return pod.Containers[0].Args, files, nil
}
