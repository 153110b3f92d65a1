package hostcluster

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// SecretVersion is the resource version of a Secret that pods mount, and whether it exists.
// The Secrets a user names (etcd TLS, a CA, an OIDC CA, webhook configurations) carry no
// label of ours, so they are looked up in the cache of every Secret's metadata, when the host
// has one; the controllers' own are in the labelled cache too.
func (h *Host) SecretVersion(namespace, name string) (string, bool) {
	if h.SecretMetadata != nil {
		obj, exists, err := h.SecretMetadata.GetIndexer().GetByKey(namespace + "/" + name)
		if err != nil || !exists {
			return "", false
		}
		m, ok := obj.(metav1.Object)
		if !ok {
			return "", false
		}
		return m.GetResourceVersion(), true
	}
	s, err := h.Secrets.Secrets(namespace).Get(name)
	if err != nil {
		return "", false
	}
	return s.ResourceVersion, true
}

// MountedVersions are the resource versions of the named Secrets that exist, keyed by name:
// what a managed etcd's mounts hash is made of, so that a change to any of them rolls it.
func (h *Host) MountedVersions(namespace string, names []string) map[string]string {
	versions := map[string]string{}
	for _, name := range names {
		if v, ok := h.SecretVersion(namespace, name); ok {
			versions[name] = v
		}
	}
	return versions
}

// mountedVersions are the resource versions of what mounts mount that exists and rolls the
// pods (workload.Mount.Rolls), keyed by the Secret's name or "configmap/" and the
// ConfigMap's: what a Deployment's mounts hash is made of. missing is whether one the
// Deployment waits for (workload.Mount.Waited) does not exist yet.
func (h *Host) mountedVersions(namespace string, mounts []workload.Mount) (versions map[string]string, missing bool) {
	versions = map[string]string{}
	for _, m := range mounts {
		if !m.Rolls() {
			continue
		}
		key, version, ok := m.Secret, "", false
		if m.Secret != "" {
			version, ok = h.SecretVersion(namespace, m.Secret)
		} else if cm, err := h.ConfigMaps.ConfigMaps(namespace).Get(m.ConfigMap); err == nil {
			key, version, ok = "configmap/"+cm.Name, cm.ResourceVersion, true
		}
		if ok {
			versions[key] = version
		} else if m.Waited() {
			missing = true
		}
	}
	return versions, missing
}

// UsersSecret reports whether an object is a Secret the controllers did not write: one a
// user names in a spec. The controllers' own reach their owners through their labels.
func UsersSecret(m metav1.Object) bool {
	return m.GetLabels()[pki.LabelManagedBy] != pki.ManagedBy
}

// SecretMetadataTransform is the transform of the cache of every Secret's metadata: it keeps
// what the controllers read of a Secret they do not own (its name and namespace, UID,
// resourceVersion and labels) and the server's own operator.kcp.io/ annotations, and drops
// the rest before it is stored. A client-side applied Secret's
// kubectl.kubernetes.io/last-applied-configuration annotation holds its whole data, and
// managed fields grow with every writer: across a cluster's Secrets, neither is for the server
// to hold. Anything other than object metadata passes as it is.
func SecretMetadataTransform(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	kept := &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Labels: m.Labels, DeletionTimestamp: m.DeletionTimestamp,
	}}
	for k, v := range m.Annotations {
		if strings.HasPrefix(k, pki.AnnotationPrefix) {
			if kept.Annotations == nil {
				kept.Annotations = map[string]string{}
			}
			kept.Annotations[k] = v
		}
	}
	return kept, nil
}
