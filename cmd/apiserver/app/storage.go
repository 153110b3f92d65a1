package app

import (
	"fmt"

	serverstorage "k8s.io/apiserver/pkg/server/storage"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// applyStorageMediaType sets the codec of the objects in etcd from --storage-media-type. The
// generic options honour that flag only through a storage factory, which this server does
// not use: without this, objects are stored in the codec given to NewRecommendedOptions.
// The codec writes the media type (protobuf by default, as kube-apiserver) and reads any
// format the server serves, so objects written as JSON before the switch still decode and
// are rewritten as protobuf on their next update.
func (o *Options) applyStorageMediaType() error {
	etcd := o.RecommendedOptions.Etcd
	codec, _, err := serverstorage.NewStorageCodec(serverstorage.StorageCodecConfig{
		StorageMediaType:  etcd.DefaultStorageMediaType,
		StorageSerializer: o.codecs,
		StorageVersion:    operatorv1alpha1.SchemeGroupVersion,
		MemoryVersion:     operator.SchemeGroupVersion,
		Config:            etcd.StorageConfig,
	})
	if err != nil {
		return fmt.Errorf("--storage-media-type: %w", err)
	}
	etcd.StorageConfig.Codec = codec
	return nil
}
