// Package rootshard serves the rootshards resource and its status subresource.
package rootshard

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/validation"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// Kind describes RootShards to the shared registry code.
var Kind = store.Kind[*operator.RootShard, operator.RootShardSpec, operator.RootShardStatus]{
	Resource:   operator.Resource("rootshards"),
	Singular:   operator.Resource("rootshard"),
	New:        func() *operator.RootShard { return &operator.RootShard{} },
	NewList:    func() runtime.Object { return &operator.RootShardList{} },
	Spec:       func(o *operator.RootShard) *operator.RootShardSpec { return &o.Spec },
	Status:     func(o *operator.RootShard) *operator.RootShardStatus { return &o.Status },
	Conditions: func(o *operator.RootShard) *[]metav1.Condition { return &o.Status.Conditions },

	Permissions: func(o *operator.RootShard) []store.Permission {
		spec := field.NewPath("spec")
		return append(store.ComponentPermissions(&o.Spec.ComponentSpec, spec),
			slices.Concat(store.CertificatesPermissions(o.Spec.Certificates, spec.Child("certificates")),
				store.AuthPermissions(o.Spec.Auth, spec.Child("auth")),
				store.CABundlePermissions(o.Spec.CABundleSecretRef, o.Spec.ClientCABundleRef, spec),
				store.ShardConfigPermissions(&o.Spec.CommonShardSpec, spec),
				store.EtcdRestorePermissions(o.Spec.Etcd.Managed, operator.EtcdRestoreSource{Kind: "RootShard", Name: o.Name},
					spec.Child("etcd", "managed", "restore")),
				store.CachePermissions(o.Spec.Cache, spec.Child("cache")),
				proxyPermissions(o.Spec.Proxy, spec.Child("proxy")))...)
	},

	Normalize: func(o *operator.RootShard) {
		o.Spec.Certificates = operator.WithoutEmptyCertificates(o.Spec.Certificates)
	},

	Replicas: func(o *operator.RootShard) *int32 { return o.Spec.Replicas },
	NestedReplicas: func(o *operator.RootShard) map[string]*int32 {
		if o.Spec.Proxy == nil {
			return nil
		}
		return map[string]*int32{"proxy.replicas": o.Spec.Proxy.Replicas}
	},
	Rotations: func(o *operator.RootShard) []operator.CARotationState { return o.Status.Rotations },

	Validate:             validation.ValidateRootShard,
	ValidateUpdate:       validation.ValidateRootShardUpdate,
	ValidateStatusUpdate: validation.ValidateRootShardStatusUpdate,
	Warnings:             validation.RootShardWarnings,
	// The roll's state decides which release every component of the setup builds: the
	// server's to write (docs/kcp-versions.md, "Upgrading a setup").
	ServerWritten: append([]store.ServerWritten[*operator.RootShard]{{
		Path:  field.NewPath("status", "version"),
		Value: func(o *operator.RootShard) any { return o.Status.Version },
		Why:   "the state of the setup's roll, which decides the release each of its components runs",
	}}, store.EtcdStatusWritten(func(o *operator.RootShard) *operator.ManagedEtcdStatus { return o.Status.Etcd })...),

	Table: store.Table[*operator.RootShard]{
		Columns: []store.Column[*operator.RootShard]{
			store.StringColumn("Hostname", "The external hostname of the kcp installation.",
				func(o *operator.RootShard) string { return o.Spec.External.Hostname }),
			store.StringColumn("Version", "The kcp release of the setup: current→target while a roll is under way.", VersionCell),
			store.PhaseColumn(func(o *operator.RootShard) string { return string(o.Status.Phase) }),
		},
		Wide: []store.Column[*operator.RootShard]{
			store.StringColumn("Replicas", "The desired number of root shard pods.",
				func(o *operator.RootShard) string { return replicas(o.Spec.Replicas) }),
			store.StringColumn("Ready", "Whether the root shard is available.",
				func(o *operator.RootShard) string {
					return store.ConditionStatus(o.Status.Conditions, operatorv1alpha1.ConditionAvailable)
				}),
		},
	},
}

// VersionCell is the release of a RootShard's setup: status.version.current, or
// current→target while a roll is under way; spec.version before the roll recorded any;
// empty without spec.version.
func VersionCell(o *operator.RootShard) string {
	v := o.Status.Version
	switch {
	case o.Spec.Version == "":
		return ""
	case v == nil || v.Current == "":
		return o.Spec.Version
	case v.Target != "" && v.Target != v.Current:
		return v.Current + "→" + v.Target
	}
	return v.Current
}

// replicas prints the desired replica count, or the count a new Deployment starts with.
func replicas(r *int32) string {
	if r == nil {
		return strconv.Itoa(int(operatorv1alpha1.DefaultReplicas))
	}
	return strconv.Itoa(int(*r))
}

// proxyPermissions hold the RootShard's internal front proxy as any component: what it runs
// (image, extraArgs, pod template) is held to creating Deployments, as the root shard's own.
func proxyPermissions(proxy *operator.RootShardProxySpec, fldPath *field.Path) []store.Permission {
	if proxy == nil {
		return nil
	}
	return store.ComponentPermissions(&proxy.ComponentSpec, fldPath)
}

// NewREST returns the rootshards endpoint and its status subresource.
// authz answers whether the requester may set the fields the server acts on with its own
// rights.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, authz authorizer.Authorizer) (*store.REST, *store.StatusREST, error) {
	return store.NewREST(scheme, optsGetter, &Kind, authz)
}
