// Package fuzzer fills operator.kcp.io objects with random data that survives a round trip
// through every serialization: fields that defaulting would set are never left empty.
package fuzzer

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/randfill"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// Funcs returns the fuzzer functions of the operator.kcp.io group.
func Funcs(_ runtimeserializer.CodecFactory) []any {
	return []any{
		func(q *resource.Quantity, c randfill.Continue) {
			// A Quantity's zero value and its canonical form differ; build a canonical one.
			*q = *resource.NewQuantity(c.Int63n(1<<20), resource.DecimalSI)
		},
		func(v *corev1.Volume, c randfill.Continue) {
			// Volume sources carry Kubernetes' own defaults, which are not ours to fuzz; a
			// Secret volume with its mode set is a defaulted volume.
			mode := int32(c.Int31n(0o777))
			*v = corev1.Volume{Name: c.String(0), VolumeSource: corev1.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: c.String(0), DefaultMode: &mode},
			}}
		},
		func(s *operator.CommonShardSpec, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.ClusterDomain == "" {
				s.ClusterDomain = operatorv1alpha1.DefaultClusterDomain
			}
			if len(s.Etcd.Endpoints) == 0 && s.Etcd.Managed == nil {
				s.Etcd.Managed = &operator.ManagedEtcd{}
				c.Fill(s.Etcd.Managed)
			}
		},
		func(s *operator.ManagedEtcd, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.Replicas == nil {
				v := operatorv1alpha1.DefaultEtcdReplicas
				s.Replicas = &v
			}
			if s.Storage == nil {
				s.Storage = &operator.EtcdStorage{}
			}
			if s.Storage.VolumeSize == nil {
				q := resource.MustParse(operatorv1alpha1.DefaultEtcdStorageSize)
				s.Storage.VolumeSize = &q
			}
			if b := s.Backup; b != nil {
				if b.Retention == nil {
					v := operatorv1alpha1.DefaultEtcdBackupRetention
					b.Retention = &v
				}
				if b.Store.Volume == nil && b.Store.S3 == nil {
					b.Store.Volume = &operator.EtcdSnapshotVolume{}
				}
			}
			if d := s.Defragmentation; d != nil {
				if d.ThresholdPercent == nil {
					v := operatorv1alpha1.DefaultEtcdDefragmentationThresholdPercent
					d.ThresholdPercent = &v
				}
				if d.MinimumSize == nil {
					q := resource.MustParse(operatorv1alpha1.DefaultEtcdDefragmentationMinimumSize)
					d.MinimumSize = &q
				}
			}
		},
		func(s *operator.CacheServerSpec, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.ClusterDomain == "" {
				s.ClusterDomain = operatorv1alpha1.DefaultClusterDomain
			}
		},
		func(s *operator.VirtualWorkspaceSpec, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.ClusterDomain == "" {
				s.ClusterDomain = operatorv1alpha1.DefaultClusterDomain
			}
		},
		func(s *operator.ExternalConfig, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.Port == 0 {
				s.Port = operatorv1alpha1.DefaultExternalPort
			}
		},
		func(s *operator.ObjectReference, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.Kind == "" {
				s.Kind = operatorv1alpha1.DefaultIssuerKind
			}
			if s.Group == "" {
				s.Group = operatorv1alpha1.DefaultIssuerGroup
			}
		},
		func(s *[]string, c randfill.Continue) {
			// JSON drops an empty list: it comes back as nil.
			c.FillNoCustom(s)
			if len(*s) == 0 {
				*s = nil
			}
		},
		func(s *operator.OIDCConfiguration, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.CAFileRef != nil && s.CAFileRef.Key == "" {
				s.CAFileRef.Key = operatorv1alpha1.DefaultOIDCCAKey
			}
		},
		func(s *operator.TokenAuthFileSpec, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.Key == "" {
				s.Key = operatorv1alpha1.DefaultTokenAuthFileKey
			}
		},
		func(s *operator.KubeconfigSpec, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.TargetWorkspace == "" {
				s.TargetWorkspace = operatorv1alpha1.DefaultWorkspace
			}
		},
		func(s *operator.KubeconfigRequestSpec, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.ExpirationSeconds == nil {
				v := operatorv1alpha1.DefaultExpirationSeconds
				s.ExpirationSeconds = &v
			}
			if s.Workspace == "" {
				s.Workspace = operatorv1alpha1.DefaultWorkspace
			}
		},
	}
}
