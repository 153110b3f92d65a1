package validation

import (
	"fmt"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// The longest object names whose derived Service name still fits a DNS-1035 label
// (63 characters), because the controllers name host-cluster objects after them.
const (
	maxRootShardNameLength   = min(validation.DNS1035LabelMaxLength-len(rootShardServiceSuffix), MaxCommonNameLength-len(rootShardCommonNameSuffix))
	maxShardNameLength       = min(validation.DNS1035LabelMaxLength-len(shardServiceSuffix), MaxCommonNameLength-len(shardCommonNameSuffix))
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

// The longest suffixes the server appends to a RootShard's or a Shard's name to make the
// CommonName of a certificate it has cert-manager issue, which must fit RFC 5280's 64
// characters (MaxCommonNameLength): a RootShard's intermediate CA <name>-requestheader-client-ca
// (pki.CAName), and a Shard's service-account signer <name>-service-account and managed etcd
// peer <name>-shard-etcd-peer (resources/kcp and resources/etcd). The other kinds' CommonNames
// are their Service names or shorter, which the Service suffixes already bound.
const (
	rootShardCommonNameSuffix = "-" + string(pki.RequestHeaderClientCA) + "-ca"
	shardCommonNameSuffix     = "-shard-etcd-peer"
)

var (
	rootShardNameFunc        = reserved(certificateOwnerNameFunc(maxRootShardNameLength, rootShardServiceSuffix, rootShardCommonNameSuffix))
	shardNameFunc            = reserved(certificateOwnerNameFunc(maxShardNameLength, shardServiceSuffix, shardCommonNameSuffix), reservedShardName)
	frontProxyNameFunc       = reserved(serviceOwnerNameFunc(maxFrontProxyNameLength, frontProxyServiceSuffix))
	cacheServerNameFunc      = reserved(serviceOwnerNameFunc(maxCacheServerNameLength, cacheServerServiceSuffix))
	virtualWorkspaceNameFunc = reserved(serviceOwnerNameFunc(maxVirtualWorkspaceNameLength, virtualWorkspaceServiceSuffix))

	// kubeconfigNameFunc: a Kubeconfig's name becomes a label value on its Secret and
	// Certificate, so it must be a DNS-1123 label.
	kubeconfigNameFunc = apimachineryvalidation.NameIsDNSLabel
)

// reservedNames are names no setup may take, and why: the namespace's bootstrap PKI is
// kcp-pki-bootstrap and kcp-pki-ca, which a setup named kcp-pki would derive too.
var reservedNames = map[string]string{
	"kcp-pki": "is reserved: the namespace's bootstrap PKI is kcp-pki-bootstrap and kcp-pki-ca",
}

// reservedShardName is what a Shard may not be named: kcp registers the root shard as root
// (a RootShard runs without --shard-name), and a Shard registers itself under its own name.
var reservedShardName = map[string]string{
	"root": "is reserved: kcp registers the root shard in the root workspace as the Shard root",
}

// reserved refuses the reserved names, and those in more, before what validate says.
func reserved(validate apimachineryvalidation.ValidateNameFunc, more ...map[string]string) apimachineryvalidation.ValidateNameFunc {
	return func(name string, prefix bool) []string {
		if !prefix {
			for _, names := range append([]map[string]string{reservedNames}, more...) {
				if why, ok := names[name]; ok {
					return []string{why}
				}
			}
		}
		return validate(name, prefix)
	}
}

// certificateOwnerNameFunc validates the name of an object that owns a Service named
// <name><serviceSuffix> and certificates whose longest CommonName is <name><cnSuffix>: a
// DNS-1035 label short enough for both to fit, whichever bounds it.
func certificateOwnerNameFunc(maxLength int, serviceSuffix, cnSuffix string) apimachineryvalidation.ValidateNameFunc {
	if maxLength == validation.DNS1035LabelMaxLength-len(serviceSuffix) {
		return serviceOwnerNameFunc(maxLength, serviceSuffix)
	}
	return ownerNameFunc(maxLength, fmt.Sprintf("must be no more than %d characters, so that the CommonName <name>%s of a certificate "+
		"the server has cert-manager issue fits the %d characters of RFC 5280 (cert-manager refuses a longer one)", maxLength, cnSuffix, MaxCommonNameLength))
}

// serviceOwnerNameFunc validates the name of an object that owns a Service named
// <name><serviceSuffix>: a DNS-1035 label short enough for the suffix to fit.
func serviceOwnerNameFunc(maxLength int, serviceSuffix string) apimachineryvalidation.ValidateNameFunc {
	return ownerNameFunc(maxLength, fmt.Sprintf("must be no more than %d characters, so that the Service <name>%s is a valid name",
		maxLength, serviceSuffix))
}

// ownerNameFunc validates a DNS-1035 label of at most maxLength characters, saying why with
// tooLong.
func ownerNameFunc(maxLength int, tooLong string) apimachineryvalidation.ValidateNameFunc {
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
