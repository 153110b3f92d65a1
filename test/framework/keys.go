package framework

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/pem"
	"sort"
	"strings"
	"sync"
)

// keySet is every private key the stack has held, found in Secrets, PKI files and the
// responses that legitimately carry keys. It keeps where each key was first seen, so that a
// finding can name the key without showing it.
type keySet struct {
	mu   sync.Mutex
	keys map[[sha256.Size]byte]heldKey
}

// heldKey is a key's DER bytes and where it was first seen.
type heldKey struct {
	der    []byte
	origin string
}

func newKeySet() *keySet { return &keySet{keys: map[[sha256.Size]byte]heldKey{}} }

// harvest adds every private key in data, PEM or base64 of PEM at any depth, and returns how
// many keys it found.
func (k *keySet) harvest(origin string, data []byte) int {
	ders := privateKeysIn(data, 3)
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, der := range ders {
		sum := sha256.Sum256(der)
		if _, ok := k.keys[sum]; !ok {
			k.keys[sum] = heldKey{der: der, origin: origin}
		}
	}
	return len(ders)
}

// list is the keys in a stable order.
func (k *keySet) list() []heldKey {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]heldKey, 0, len(k.keys))
	for _, key := range k.keys {
		out = append(out, key)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].origin < out[j].origin })
	return out
}

var pemBegin = []byte("-----BEGIN ")

// privateKeysIn returns the DER of every PEM private key block in data and, down to depth
// levels of base64, in every base64 run of data: a Secret's data, a kubeconfig's
// client-key-data, a kubeconfig inside a Secret.
func privateKeysIn(data []byte, depth int) [][]byte {
	var ders [][]byte
	for rest := data; ; {
		i := bytes.Index(rest, pemBegin)
		if i < 0 {
			break
		}
		block, _ := pem.Decode(rest[i:])
		if block != nil && strings.HasSuffix(block.Type, "PRIVATE KEY") {
			ders = append(ders, block.Bytes)
		}
		rest = rest[i+len(pemBegin):]
	}
	if depth == 0 {
		return ders
	}
	for _, run := range base64Runs(data, 40) {
		// A run may start with a stray letter of an escape (the n of \n): try each start.
		for skip := 0; skip < 4 && skip < len(run); skip++ {
			if decoded := decodeLenient(run[skip:]); bytes.Contains(decoded, pemBegin) || len(base64Runs(decoded, 40)) > 0 {
				if found := privateKeysIn(decoded, depth-1); len(found) > 0 {
					ders = append(ders, found...)
					break
				}
			}
		}
	}
	return ders
}

// decodeLenient decodes run as standard base64, padded or not, dropping a last character
// that cannot end a group.
func decodeLenient(run []byte) []byte {
	s := strings.TrimRight(string(run), "=")
	if len(s)%4 == 1 {
		s = s[:len(s)-1]
	}
	out, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil
	}
	return out
}

// isBase64 reports whether c is in the standard base64 alphabet, padding included.
func isBase64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '='
}

// base64Runs returns the runs of base64 characters in data of at least min characters.
func base64Runs(data []byte, min int) [][]byte {
	var runs [][]byte
	start := -1
	for i := 0; i <= len(data); i++ {
		if i < len(data) && isBase64(data[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= min {
			runs = append(runs, data[start:i])
		}
		start = -1
	}
	return runs
}

// base64Shifts returns, for each of the three offsets at which text can sit in a larger
// text, the part of the larger text's base64 that depends on text alone. One of the three
// occurs in the base64 of anything that contains text.
func base64Shifts(text string) []string {
	out := make([]string, 0, 3)
	for shift := 0; shift < 3; shift++ {
		// With shift bytes of the group before it, text's first whole group starts at skip.
		skip := (3 - shift) % 3
		if len(text) < skip+3 {
			continue
		}
		whole := text[skip:]
		whole = whole[:len(whole)/3*3]
		out = append(out, base64.StdEncoding.EncodeToString([]byte(whole)))
	}
	return out
}

// encodings returns text and the parts of its base64 and of the base64 of its base64 that
// show through at any offset: a value in a Secret's data, a client-key-data in a kubeconfig,
// and a kubeconfig in a Secret.
func encodings(text string) []string {
	out := []string{text}
	for _, once := range base64Shifts(text) {
		out = append(out, once)
		out = append(out, base64Shifts(once)...)
	}
	return out
}

// markerNeedles are what betrays a private key of any kind: the armor of a PEM private key
// block, and its base64 once and twice over. Prose that names a "PRIVATE KEY block", as
// the OpenAPI of projected pod certificates does, is not a key.
func markerNeedles() []needle {
	var out []needle
	for i, text := range encodings(" PRIVATE KEY-----") {
		what := "a PRIVATE KEY block"
		switch {
		case i == 0:
			text = "PRIVATE KEY-----"
		case i%4 == 1:
			what = "the base64 of a PRIVATE KEY block"
		default:
			what = "the base64 of the base64 of a PRIVATE KEY block"
		}
		out = append(out, needle{text: text, what: what})
	}
	return out
}

// keyNeedles are what betrays one key: a line of its PEM body (which is also a substring of
// its DER's base64), and that line's base64 once and twice over.
func keyNeedles(key heldKey) []needle {
	der := base64.StdEncoding.EncodeToString(key.der)
	line := der
	switch {
	case len(der) >= 128:
		line = der[64:128] // the PEM body's second line, whole
	case len(der) > 64:
		line = der[:64]
	}
	var out []needle
	for i, text := range encodings(line) {
		what := "the base64 of the key held in " + key.origin
		switch {
		case i == 0:
			what = "the key held in " + key.origin + " (PEM or DER base64)"
		case i%4 != 1:
			what = "the base64 of the base64 of the key held in " + key.origin
		}
		out = append(out, needle{text: text, what: what})
	}
	return out
}

// needle is a string to look for, and what finding it means, which never contains the key.
type needle struct {
	text, what string
}
