package localstack

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodSources reads the Secrets and ConfigMaps a pod's volumes and its containers' variables
// (its init containers' too) name, as the cluster holds them; an optional one that is missing
// is left out, another is a NotFound error that names it.
func (s *Stack) PodSources(ctx context.Context, namespace string, pod *corev1.PodSpec) (map[string]*corev1.Secret, map[string]*corev1.ConfigMap, error) {
	secrets, configMaps := map[string]*corev1.Secret{}, map[string]*corev1.ConfigMap{}
	secret := func(name string, optional *bool) error {
		if _, ok := secrets[name]; ok {
			return nil
		}
		got, err := s.Kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && optional != nil && *optional {
			return nil
		} else if err != nil {
			return err
		}
		secrets[name] = got
		return nil
	}
	configMap := func(name string, optional *bool) error {
		if _, ok := configMaps[name]; ok {
			return nil
		}
		got, err := s.Kube.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && optional != nil && *optional {
			return nil
		} else if err != nil {
			return err
		}
		configMaps[name] = got
		return nil
	}
	for _, v := range pod.Volumes {
		var err error
		switch {
		case v.Secret != nil:
			err = secret(v.Secret.SecretName, v.Secret.Optional)
		case v.ConfigMap != nil:
			err = configMap(v.ConfigMap.Name, v.ConfigMap.Optional)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	for _, c := range append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...) {
		for _, e := range c.Env {
			var err error
			switch from := e.ValueFrom; {
			case from != nil && from.SecretKeyRef != nil:
				err = secret(from.SecretKeyRef.Name, from.SecretKeyRef.Optional)
			case from != nil && from.ConfigMapKeyRef != nil:
				err = configMap(from.ConfigMapKeyRef.Name, from.ConfigMapKeyRef.Optional)
			}
			if err != nil {
				return nil, nil, err
			}
		}
	}
	return secrets, configMaps, nil
}
