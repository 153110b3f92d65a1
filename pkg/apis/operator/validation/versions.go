package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/kcpversion"
)

// imageVersion is the kcp release of a component's image, as the builders compute it.
func imageVersion(image *operator.ImageSpec) kcpversion.Version {
	if image == nil {
		return kcpversion.FromTag("")
	}
	return kcpversion.FromTag(image.Tag)
}

// validateCacheServerVersion refuses what the image's kcp release cannot run: an external
// etcd needs the cache server's --etcd-* flags, which kcp has from v0.31.0 on.
func validateCacheServerVersion(spec *operator.CacheServerSpec, fldPath *field.Path) field.ErrorList {
	v := imageVersion(spec.Image)
	if spec.Etcd != nil && !v.CacheServerEtcd() {
		return field.ErrorList{field.Forbidden(fldPath.Child("etcd"), fmt.Sprintf(
			"the cache server of kcp %s has only its embedded etcd: an external etcd needs kcp %s or newer (spec.image.tag)",
			v, kcpversion.CacheServerEtcd))}
	}
	return nil
}
