package manager

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// protobufAccept asks for protobuf and takes JSON from a server or resource that has no
// protobuf, as kube-apiserver's own clients do.
const protobufAccept = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON

// ProtobufConfig returns a copy of cfg that sends and prefers protobuf: for the clientsets of
// built-in kinds and of operator.kcp.io, whose servers decode it, never for custom resources,
// which answer a protobuf body with 415.
func ProtobufConfig(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.ContentType = runtime.ContentTypeProtobuf
	out.AcceptContentTypes = protobufAccept
	return out
}

// JSONConfig returns a copy of cfg that sends and accepts JSON only: for cert-manager's
// custom resources, which a CustomResourceDefinition serves without protobuf.
func JSONConfig(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.ContentType = runtime.ContentTypeJSON
	out.AcceptContentTypes = runtime.ContentTypeJSON
	return out
}
