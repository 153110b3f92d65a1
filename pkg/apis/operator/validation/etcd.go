package validation

import (
	"net"
	"slices"
	"strconv"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// managedEtcdReplicas are the member counts a managed etcd may have: odd, so that a quorum
// survives a member's loss, and small, because every write goes through every member.
var managedEtcdReplicas = []string{"1", "3", "5"}

// validateEtcdConfig checks the etcd cluster a shard stores its data in: exactly one of
// endpoints (an etcd run elsewhere) and managed (one the server runs).
func validateEtcdConfig(etcd *operator.EtcdConfig, fldPath *field.Path) field.ErrorList {
	if etcd == nil {
		return nil
	}
	var allErrs field.ErrorList
	switch {
	case etcd.Managed != nil && len(etcd.Endpoints) > 0:
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("managed"), "endpoints and managed are mutually exclusive"))
	case etcd.Managed != nil:
		allErrs = append(allErrs, validateManagedEtcd(etcd.Managed, fldPath.Child("managed"))...)
		if etcd.TLSConfig != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("tlsConfig"),
				"may not be set with managed: the managed etcd's client certificate is issued by the server"))
		}
	default:
		allErrs = append(allErrs, validateEtcdEndpoints(etcd.Endpoints, fldPath.Child("endpoints"))...)
	}

	if etcd.TLSConfig != nil {
		allErrs = append(allErrs, validateDNS1123SubdomainName(etcd.TLSConfig.SecretRef.Name,
			fldPath.Child("tlsConfig", "secretRef", "name"))...)
	}

	// A prefix without a leading slash is accepted, as kcp-operator accepts it: kcp's
	// storage joins "/" and the prefix (etcdWarnings says so).
	return allErrs
}

// validateCacheServerEtcdConfig checks a CacheServer's etcd: only an external one, since a
// cache server without one runs its embedded etcd.
func validateCacheServerEtcdConfig(etcd *operator.EtcdConfig, fldPath *field.Path) field.ErrorList {
	if etcd != nil && etcd.Managed != nil {
		return field.ErrorList{field.Forbidden(fldPath.Child("managed"),
			"a CacheServer has no managed etcd: without spec.etcd it runs an embedded one")}
	}
	return validateEtcdConfig(etcd, fldPath)
}

// validateEtcdEndpoints checks the client URLs of an external etcd.
func validateEtcdEndpoints(endpoints []string, fldPath *field.Path) field.ErrorList {
	if len(endpoints) == 0 {
		return field.ErrorList{field.Required(fldPath, "at least one etcd endpoint is required, or managed")}
	}
	var allErrs field.ErrorList
	seen := sets.New[string]()
	for i, endpoint := range endpoints {
		idxPath := fldPath.Index(i)
		if endpoint == "" {
			allErrs = append(allErrs, field.Required(idxPath, ""))
			continue
		}
		if schemeless(endpoint) {
			allErrs = append(allErrs, validateHostPort(endpoint, idxPath)...)
		} else {
			allErrs = append(allErrs, validateBaseURL(endpoint, httpOrHTTPSSchemes, idxPath)...)
		}
		// A trailing slash names the same endpoint.
		key := strings.TrimSuffix(endpoint, "/")
		if seen.Has(key) {
			allErrs = append(allErrs, field.Duplicate(idxPath, endpoint))
		}
		seen.Insert(key)
	}
	return allErrs
}

// validateManagedEtcd checks the etcd cluster the server runs for a shard. Its image,
// resources and template are checked like a component's.
func validateManagedEtcd(managed *operator.ManagedEtcd, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if managed.Replicas != nil && !slices.Contains(managedEtcdReplicas, strconv.Itoa(int(*managed.Replicas))) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("replicas"), *managed.Replicas, managedEtcdReplicas))
	}
	if managed.Storage != nil {
		storagePath := fldPath.Child("storage")
		if size := managed.Storage.VolumeSize; size != nil && size.Sign() <= 0 {
			allErrs = append(allErrs, field.Invalid(storagePath.Child("size"), size.String(), "must be greater than zero"))
		}
		if class := managed.Storage.StorageClassName; class != nil {
			allErrs = append(allErrs, validateDNS1123SubdomainName(*class, storagePath.Child("storageClassName"))...)
		}
	}
	allErrs = append(allErrs, validateEtcdQuota(managed, fldPath.Child("quota"))...)
	if d := managed.Defragmentation; d != nil {
		defragPath := fldPath.Child("defragmentation")
		if t := d.ThresholdPercent; t != nil && (*t < 1 || *t > 100) {
			allErrs = append(allErrs, field.Invalid(defragPath.Child("thresholdPercent"), *t, "must be between 1 and 100"))
		}
		if m := d.MinimumSize; m != nil && m.Sign() < 0 {
			allErrs = append(allErrs, field.Invalid(defragPath.Child("minimumSize"), m.String(), "must not be negative"))
		}
	}
	allErrs = append(allErrs, validateEtcdBackup(managed.Backup, fldPath.Child("backup"))...)
	allErrs = append(allErrs, validateEtcdRestore(managed.Restore, managed.Backup, fldPath)...)
	allErrs = append(allErrs, validateImage(managed.Image, fldPath.Child("image"))...)
	allErrs = append(allErrs, validateResources(managed.Resources, fldPath.Child("resources"))...)
	allErrs = append(allErrs, validateDeploymentTemplate(managed.Template, fldPath.Child("template"))...)
	return allErrs
}

// validateEtcdQuota checks the backend quota: positive, a whole number of bytes, and no more
// than a member's volume, which would fill before etcd raised its alarm.
func validateEtcdQuota(managed *operator.ManagedEtcd, fldPath *field.Path) field.ErrorList {
	quota := managed.Quota
	if quota == nil {
		return nil
	}
	if quota.Sign() <= 0 {
		return field.ErrorList{field.Invalid(fldPath, quota.String(), "must be greater than zero")}
	}
	if quota.MilliValue()%1000 != 0 {
		return field.ErrorList{field.Invalid(fldPath, quota.String(), "must be a whole number of bytes")}
	}
	if managed.Storage != nil && managed.Storage.VolumeSize != nil && quota.Cmp(*managed.Storage.VolumeSize) > 0 {
		return field.ErrorList{field.Invalid(fldPath, quota.String(),
			"must not be larger than storage.size ("+managed.Storage.VolumeSize.String()+"): the volume would fill before etcd raised NOSPACE")}
	}
	return nil
}

// validateEtcdConfigUpdate refuses the changes a running etcd cannot follow.
func validateEtcdConfigUpdate(newEtcd, oldEtcd *operator.EtcdConfig, fldPath *field.Path) field.ErrorList {
	managedPath := fldPath.Child("managed")
	switch {
	case newEtcd.Managed == nil && oldEtcd.Managed == nil:
		return nil
	case newEtcd.Managed == nil:
		return field.ErrorList{field.Forbidden(managedPath,
			"may not be removed: the data would not follow from the managed etcd to the endpoints")}
	case oldEtcd.Managed == nil:
		return field.ErrorList{field.Forbidden(managedPath,
			"may not be set on a shard with endpoints: the data would not follow from the external etcd to the managed one")}
	}
	var allErrs field.ErrorList
	newReplicas, oldReplicas := newEtcd.Managed.Replicas, oldEtcd.Managed.Replicas
	if !apiequality.Semantic.DeepEqual(newReplicas, oldReplicas) {
		allErrs = append(allErrs, field.Forbidden(managedPath.Child("replicas"),
			"is immutable for now: growing or shrinking a running etcd cluster needs member changes one at a time"))
	}
	if !apiequality.Semantic.DeepEqual(newEtcd.Managed.Storage, oldEtcd.Managed.Storage) {
		allErrs = append(allErrs, field.Forbidden(managedPath.Child("storage"),
			"is immutable: a StatefulSet's volume claim templates cannot change"))
	}
	if newVolume, oldVolume := snapshotVolume(newEtcd.Managed), snapshotVolume(oldEtcd.Managed); newVolume != nil && oldVolume != nil &&
		!apiequality.Semantic.DeepEqual(newVolume, oldVolume) {
		allErrs = append(allErrs, field.Forbidden(managedPath.Child("backup", "store", "volume"),
			"is immutable while it is the store: a claim's size and class are set when it is made"))
	}
	return allErrs
}

// snapshotVolume is the snapshot volume of a managed etcd's backup, or nil.
func snapshotVolume(m *operator.ManagedEtcd) *operator.EtcdSnapshotVolume {
	if m.Backup == nil {
		return nil
	}
	return m.Backup.Store.Volume
}

// schemeless reports whether an etcd endpoint is written host:port, without a scheme, as
// kcp-operator accepts it and etcd's client dials it (with TLS exactly when client
// certificates are configured; etcdWarnings says so).
func schemeless(endpoint string) bool { return !strings.Contains(endpoint, "://") }

// validateHostPort checks an etcd endpoint written host:port: a host name or IP address and
// a port, which etcd's client needs.
func validateHostPort(endpoint string, fldPath *field.Path) field.ErrorList {
	host, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		return field.ErrorList{field.Invalid(fldPath, endpoint,
			"must be a URL such as https://etcd.example.com:2379, or host:port such as etcd.example.com:2379")}
	}
	var allErrs field.ErrorList
	if net.ParseIP(host) == nil && len(validation.IsDNS1123Subdomain(host)) > 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, endpoint, "the host must be an IP address or a lower case DNS name"))
	}
	if n, err := strconv.Atoi(port); err != nil || len(validation.IsValidPortNum(n)) > 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, endpoint, "port must be between 1 and 65535, inclusive"))
	}
	return allErrs
}
