package v1alpha1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// RootShardRefField is the field selector that finds the Shards and FrontProxies of a RootShard.
const RootShardRefField = "spec.rootShard.ref.name"

// addFieldLabelConversions declares which field selectors each kind accepts, so that an
// unsupported selector is a 400 instead of an empty list.
func addFieldLabelConversions(scheme *runtime.Scheme) error {
	for kind, fields := range map[string][]string{
		"RootShard":   nil,
		"Shard":       {RootShardRefField},
		"FrontProxy":  {RootShardRefField},
		"CacheServer": nil,
		"Kubeconfig":  nil,
	} {
		allowed := append([]string{"metadata.name", "metadata.namespace"}, fields...)
		err := scheme.AddFieldLabelConversionFunc(SchemeGroupVersion.WithKind(kind), func(label, value string) (string, string, error) {
			for _, f := range allowed {
				if label == f {
					return label, value, nil
				}
			}
			return "", "", fmt.Errorf("field label not supported: %s", label)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
