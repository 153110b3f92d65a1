package controller

import (
	corev1 "k8s.io/api/core/v1"
)

// BundleSources are the names of the users' Secrets named by caBundleSecretRef and
// clientCABundleRef: a change to one rebuilds the bundles made of it.
func BundleSources(refs ...*corev1.LocalObjectReference) []string {
	var names []string
	for _, ref := range refs {
		if ref != nil {
			names = append(names, ref.Name)
		}
	}
	return names
}
