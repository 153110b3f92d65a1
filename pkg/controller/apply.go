package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// DesiredHashAnnotation holds a hash of what the controllers last applied to an object. A
// resync whose desired object hashes the same writes nothing.
const DesiredHashAnnotation = "operator.kcp.io/desired-hash"

// FieldManager is the server-side apply field manager of every write to the host cluster.
const FieldManager = pki.ManagedBy

// ApplyOptions are the options of every server-side apply to the host cluster. Force takes
// over fields that someone else changed: these objects are ours.
var ApplyOptions = metav1.ApplyOptions{FieldManager: FieldManager, Force: true}

// DesiredHash is the hash of a desired apply configuration.
func DesiredHash(desired any) (string, error) {
	data, err := json.Marshal(desired)
	if err != nil {
		return "", fmt.Errorf("hashing a desired object: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16]), nil
}

// UpToDate reports whether the existing object (nil when absent) was last applied with hash.
func UpToDate(existing metav1.Object, hash string) bool {
	return existing != nil && existing.GetAnnotations()[DesiredHashAnnotation] == hash
}
