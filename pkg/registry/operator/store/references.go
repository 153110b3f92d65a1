package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// VerbUse is the custom verb that lets a setup reference another object of this API: a
// Shard or a FrontProxy joins a RootShard and gets identities from its CAs, a Kubeconfig
// gets a credential signed by them, a VirtualWorkspace serves a shard with an admin identity.
// RBAC grants it like any verb, with resourceNames for one object only.
const VerbUse = "use"

// referencedKinds are the kinds a reference may name, by resource, for a 403's message.
var referencedKinds = map[string]string{
	"rootshards": "RootShard", "shards": "Shard", "frontproxies": "FrontProxy",
	"cacheservers": "CacheServer", "virtualworkspaces": "VirtualWorkspace",
}

// UsePermission is use on the object of resource named by the field at fld.
func UsePermission(fld *field.Path, resource, name string) Permission {
	return Permission{
		Field: fld.String(), Value: referencedKinds[resource] + "/" + name,
		Verb: VerbUse, Group: operator.GroupName, Resource: resource, Name: name,
	}
}

// ReferencePermissions holds a reference to an object of this API to using it, and nothing
// when ref is nil.
func ReferencePermissions(ref *corev1.LocalObjectReference, fld *field.Path, resource string) []Permission {
	if ref == nil {
		return nil
	}
	return []Permission{UsePermission(fld, resource, ref.Name)}
}

// CopyPermissions holds a copy of a reference Secret (a RootShard's join Secret, a
// CacheServer's client Secret, a RootShard's kubeconfig issuer) to reading it: the server
// uses the keys in it for the author, which a user who may not read the copy must not get.
func CopyPermissions(ref *corev1.LocalObjectReference, fld *field.Path) []Permission {
	if ref == nil {
		return nil
	}
	return []Permission{readPermission(fld, "secrets", ref.Name)}
}

// RootShardConfigPermissions holds spec.rootShard: use on the RootShard it names, get on
// the copy of its join Secret, or get on the bootstrap Secret of its link.
func RootShardConfigPermissions(rs *operator.RootShardConfig, fld *field.Path) []Permission {
	return slices.Concat(ReferencePermissions(rs.Reference, fld.Child("ref"), "rootshards"),
		CopyPermissions(rs.SecretRef, fld.Child("secretRef")),
		LinkPermissions(rs.Link, fld.Child("link")))
}

// LinkPermissions holds a link to reading its bootstrap Secret: the server speaks over the
// link with the client certificate and key in it for the author, as it uses a copy's keys.
func LinkPermissions(link *operator.RootShardLink, fld *field.Path) []Permission {
	if link == nil {
		return nil
	}
	return CopyPermissions(&link.SecretRef, fld.Child("secretRef"))
}

// CachePermissions holds spec.cache: use on the CacheServer it names, get on the copy of
// its client Secret, or get on the bootstrap Secret of the link it is signed over.
func CachePermissions(cache *operator.CacheConfig, fld *field.Path) []Permission {
	if cache == nil {
		return nil
	}
	permissions := append(ReferencePermissions(cache.Reference, fld.Child("ref"), "cacheservers"),
		CopyPermissions(cache.SecretRef, fld.Child("secretRef"))...)
	return append(permissions, LinkPermissions(cache.Link, fld.Child("link"))...)
}

// ChangeOf makes p asked again whenever what is at the field changes, not only when the
// field starts to name something: a FrontProxy's auth decides whom the RootShard it
// references lets in, so every change of it is a use of that RootShard.
func ChangeOf(p Permission, what any) Permission {
	b, err := json.Marshal(what)
	if err != nil {
		// Every spec type marshals; were one not to, the permission is asked every time.
		b = []byte(err.Error())
	}
	sum := sha256.Sum256(b)
	p.Digest = hex.EncodeToString(sum[:8])
	return p
}
