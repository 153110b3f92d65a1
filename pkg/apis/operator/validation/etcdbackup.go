package validation

import (
	"crypto/x509"
	"net/url"
	"regexp"
	"strings"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/upgrade"
)

// maxEtcdBackupRetention bounds how many snapshots a store keeps for one etcd, so that
// status.etcd.snapshots stays small.
const maxEtcdBackupRetention = 1000

// s3BucketName is S3's rule for bucket names: 3 to 63 lowercase letters, digits, dots and
// hyphens, starting and ending with a letter or digit.
var s3BucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// validateEtcdBackup checks a managed etcd's schedule, retention and store.
func validateEtcdBackup(b *operator.EtcdBackup, fldPath *field.Path) field.ErrorList {
	if b == nil {
		return nil
	}
	var allErrs field.ErrorList
	if b.Schedule != "" {
		// A CronJob's rule: five fields, and no time zone in the schedule (timeZone is the
		// field for it).
		if strings.Contains(b.Schedule, "TZ") {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("schedule"), b.Schedule, "must not name a time zone: use timeZone"))
		} else if _, err := cron.ParseStandard(b.Schedule); err != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("schedule"), b.Schedule, "must be a cron schedule of five fields: "+err.Error()))
		}
	}
	if b.TimeZone != nil {
		if _, err := upgrade.LoadTimeZone(*b.TimeZone); err != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("timeZone"), *b.TimeZone, "must be an IANA time zone name"))
		}
	}
	if r := b.Retention; r != nil && (*r < 1 || *r > maxEtcdBackupRetention) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("retention"), *r, "must be between 1 and 1000"))
	}
	storePath := fldPath.Child("store")
	switch s := b.Store; {
	case s.Volume != nil && s.S3 != nil:
		allErrs = append(allErrs, field.Forbidden(storePath.Child("s3"), "volume and s3 are mutually exclusive"))
	case s.Volume != nil:
		if size := s.Volume.VolumeSize; size != nil && size.Sign() <= 0 {
			allErrs = append(allErrs, field.Invalid(storePath.Child("volume", "size"), size.String(), "must be greater than zero"))
		}
		if class := s.Volume.StorageClassName; class != nil {
			allErrs = append(allErrs, validateDNS1123SubdomainName(*class, storePath.Child("volume", "storageClassName"))...)
		}
	case s.S3 != nil:
		allErrs = append(allErrs, validateS3SnapshotStore(s.S3, storePath.Child("s3"))...)
	}
	return allErrs
}

// validateS3SnapshotStore checks a bucket of S3-compatible storage: an https endpoint of
// host and port alone, S3's bucket names, a relative prefix, a credentials Secret's name and
// a CA bundle that parses.
func validateS3SnapshotStore(s *operator.S3SnapshotStore, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	u, err := url.Parse(s.Endpoint)
	switch {
	case s.Endpoint == "":
		allErrs = append(allErrs, field.Required(fldPath.Child("endpoint"), "the storage's https URL"))
	case err != nil:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("endpoint"), s.Endpoint, err.Error()))
	case u.Scheme != "https":
		allErrs = append(allErrs, field.Invalid(fldPath.Child("endpoint"), s.Endpoint, "must be an https URL: a snapshot holds every workspace of the installation"))
	case u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		allErrs = append(allErrs, field.Invalid(fldPath.Child("endpoint"), s.Endpoint, "must be https://host[:port], without user, path or query"))
	}
	if !s3BucketName.MatchString(s.Bucket) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("bucket"), s.Bucket,
			"must be an S3 bucket name: 3 to 63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit"))
	}
	if strings.HasPrefix(s.Prefix, "/") || strings.Contains(s.Prefix, "..") || strings.ContainsFunc(s.Prefix, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("prefix"), s.Prefix, `must not start with a slash, nor contain ".." or control characters`))
	}
	allErrs = append(allErrs, validateDNS1123SubdomainName(s.CredentialsSecretRef.Name, fldPath.Child("credentialsSecretRef", "name"))...)
	if len(s.CABundle) > 0 && !x509.NewCertPool().AppendCertsFromPEM(s.CABundle) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("caBundle"), "<PEM>", "must hold PEM certificates"))
	}
	return allErrs
}

// validateEtcdRestore checks where a managed etcd restores from: another setup's store
// (from, a RootShard or Shard of the namespace, read through its agent), or this object's own
// backup store, through its agent, which therefore needs spec.etcd.managed.backup (a bucket is
// restored from as that store: docs/etcd.md, "Restoring from a bucket").
func validateEtcdRestore(r *operator.EtcdRestore, backup *operator.EtcdBackup, managedPath *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	fldPath := managedPath.Child("restore")
	allErrs := validateDNS1123SubdomainName(r.Snapshot, fldPath.Child("snapshot"))
	switch {
	case r.From != nil:
		if r.From.Kind != "RootShard" && r.From.Kind != "Shard" {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("from", "kind"), r.From.Kind, []string{"RootShard", "Shard"}))
		}
		allErrs = append(allErrs, validateDNS1123SubdomainName(r.From.Name, fldPath.Child("from", "name"))...)
	case backup == nil:
		allErrs = append(allErrs, field.Required(managedPath.Child("backup"),
			"a restore reads this object's own backup store: spec.etcd.managed.backup names it (a bucket too, with the prefix the snapshot is under), or restore.from names another setup's"))
	}
	return allErrs
}
