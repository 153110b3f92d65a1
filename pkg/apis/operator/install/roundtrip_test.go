package install

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/roundtrip"

	"github.com/kcp-setups/apiserver/pkg/apis/operator/fuzzer"
)

// TestRoundTripTypes fills every kind with random data and checks that it survives
// internal → v1alpha1 → JSON/YAML → v1alpha1 → internal unchanged.
func TestRoundTripTypes(t *testing.T) {
	roundtrip.RoundTripTestForAPIGroup(t, Install, fuzzer.Funcs)
}

// TestRoundTripProtobuf does the same through protobuf, the wire format of the clientset and
// of storage: internal → v1alpha1 → protobuf → v1alpha1 → internal, and v1alpha1 alone.
func TestRoundTripProtobuf(t *testing.T) {
	roundtrip.RoundTripProtobufTestForAPIGroup(t, Install, fuzzer.Funcs)
}
