package validation

import (
	"fmt"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// The longest object names whose derived Service name still fits a DNS-1035 label
// (63 characters), because the controllers name host-cluster objects after them.
const (
	maxRootShardNameLength   = validation.DNS1035LabelMaxLength - len(rootShardServiceSuffix)
	maxShardNameLength       = validation.DNS1035LabelMaxLength - len(shardServiceSuffix)
	maxFrontProxyNameLength  = validation.DNS1035LabelMaxLength - len(frontProxyServiceSuffix)
	maxCacheServerNameLength = validation.DNS1035LabelMaxLength - len(cacheServerServiceSuffix)
	// maxVirtualWorkspaceNameLength: kcp-operator names a VirtualWorkspace's Service and
	// Deployment <name>-virtual-workspace, and front proxies' mappings name the Service.
	maxVirtualWorkspaceNameLength = validation.DNS1035LabelMaxLength - len(virtualWorkspaceServiceSuffix)
)

// The suffixes the controllers append to an object's name to name its Service.
const (
	rootShardServiceSuffix        = "-kcp"
	shardServiceSuffix            = "-shard-kcp"
	frontProxyServiceSuffix       = "-front-proxy"
	cacheServerServiceSuffix      = "-cache-server"
	virtualWorkspaceServiceSuffix = operator.VirtualWorkspaceServiceSuffix
)

var (
	rootShardNameFunc        = serviceOwnerNameFunc(maxRootShardNameLength, rootShardServiceSuffix)
	shardNameFunc            = serviceOwnerNameFunc(maxShardNameLength, shardServiceSuffix)
	frontProxyNameFunc       = serviceOwnerNameFunc(maxFrontProxyNameLength, frontProxyServiceSuffix)
	cacheServerNameFunc      = serviceOwnerNameFunc(maxCacheServerNameLength, cacheServerServiceSuffix)
	virtualWorkspaceNameFunc = serviceOwnerNameFunc(maxVirtualWorkspaceNameLength, virtualWorkspaceServiceSuffix)

	// kubeconfigNameFunc: a Kubeconfig's name becomes a label value on its Secret and
	// Certificate, so it must be a DNS-1123 label.
	kubeconfigNameFunc = apimachineryvalidation.NameIsDNSLabel
)

// serviceOwnerNameFunc validates the name of an object that owns a Service named
// <name><serviceSuffix>: a DNS-1035 label short enough for the suffix to fit.
func serviceOwnerNameFunc(maxLength int, serviceSuffix string) apimachineryvalidation.ValidateNameFunc {
	tooLong := fmt.Sprintf("must be no more than %d characters, so that the Service <name>%s is a valid name",
		maxLength, serviceSuffix)
	genericTooLong := validation.MaxLenError(validation.DNS1035LabelMaxLength)

	return func(name string, prefix bool) []string {
		var msgs []string
		// A generateName prefix is not length-checked: the generated name is checked too, and
		// reporting both would count one fault twice.
		if !prefix && len(name) > maxLength {
			msgs = append(msgs, tooLong)
		}
		for _, msg := range apimachineryvalidation.NameIsDNS1035Label(name, prefix) {
			// The stricter limit above already covers the generic 63 character one.
			if msg == genericTooLong {
				continue
			}
			msgs = append(msgs, msg)
		}
		return msgs
	}
}
