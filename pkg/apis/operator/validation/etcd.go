package validation

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// validateEtcdConfig checks the etcd cluster a shard or cache server stores its data in.
func validateEtcdConfig(etcd *operator.EtcdConfig, fldPath *field.Path) field.ErrorList {
	if etcd == nil {
		return nil
	}
	var allErrs field.ErrorList

	endpointsPath := fldPath.Child("endpoints")
	if len(etcd.Endpoints) == 0 {
		allErrs = append(allErrs, field.Required(endpointsPath, "at least one etcd endpoint is required"))
	}
	seen := sets.New[string]()
	for i, endpoint := range etcd.Endpoints {
		idxPath := endpointsPath.Index(i)
		if endpoint == "" {
			allErrs = append(allErrs, field.Required(idxPath, ""))
			continue
		}
		allErrs = append(allErrs, validateBaseURL(endpoint, httpOrHTTPSSchemes, idxPath)...)
		// A trailing slash names the same endpoint.
		key := strings.TrimSuffix(endpoint, "/")
		if seen.Has(key) {
			allErrs = append(allErrs, field.Duplicate(idxPath, endpoint))
		}
		seen.Insert(key)
	}

	if etcd.TLSConfig != nil {
		allErrs = append(allErrs, validateDNS1123SubdomainName(etcd.TLSConfig.SecretRef.Name,
			fldPath.Child("tlsConfig", "secretRef", "name"))...)
	}

	// kcp joins the prefix and its own keys; without a leading slash the keys would not be
	// below the prefix.
	if etcd.Prefix != "" && !strings.HasPrefix(etcd.Prefix, "/") {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("prefix"), etcd.Prefix, "must start with '/'"))
	}
	return allErrs
}
