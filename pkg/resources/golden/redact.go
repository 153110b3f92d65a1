package golden

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/url"
	"strings"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// RedactedSecret is a Secret as a golden file may show it: its data moved to stringData, each
// certificate as its SHA-256 fingerprint, each private key (and anything else that is not an
// https URL) as its length only. Key material never lands in testdata/.
func RedactedSecret(s *corev1ac.SecretApplyConfiguration) *corev1ac.SecretApplyConfiguration {
	out := *s
	out.Data, out.StringData = nil, map[string]string{}
	for k, v := range s.Data {
		out.StringData[k] = redact(v)
	}
	return &out
}

func redact(v []byte) string {
	if u, err := url.Parse(string(v)); err == nil && u.Scheme == "https" && !bytes.ContainsAny(v, "\n") {
		return string(v)
	}
	var shown []string
	for rest := v; ; {
		block, more := pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Sprintf("<redacted %d bytes>", len(v))
		}
		sum := sha256.Sum256(block.Bytes)
		shown = append(shown, "CERTIFICATE sha256:"+hex.EncodeToString(sum[:8]))
		rest = more
	}
	if len(shown) == 0 {
		return fmt.Sprintf("<redacted %d bytes>", len(v))
	}
	return strings.Join(shown, "\n")
}
