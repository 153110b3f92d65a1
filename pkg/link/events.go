package link

import (
	"maps"
	"slices"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// ConsumerKey names a consumer in the remote cluster.
type ConsumerKey struct {
	Kind      ConsumerKind `json:"kind"`
	Namespace string       `json:"namespace"`
	Name      string       `json:"name"`
}

// CATrust is what a consumer's pods do with one of its CAs, by the SHA-256 fingerprints of
// the CA certificates, sorted.
type CATrust struct {
	// Trusted are the CAs its pods trust.
	Trusted []string `json:"trusted"`
	// Served are the CAs its serving certificates chain to, where it serves from this CA.
	Served []string `json:"served,omitempty"`
}

// ConsumerReport is the state a remote reports of a consumer.
type ConsumerReport struct {
	Realized  bool `json:"realized"`
	Available bool `json:"available"`
	// CAs are its trust, per CA role.
	CAs map[pki.CA]CATrust `json:"cas,omitempty"`
	// KcpShard and BaseURL are the kcp shard a Shard registered and its base URL.
	KcpShard string `json:"kcpShard,omitempty"`
	BaseURL  string `json:"baseURL,omitempty"`
}

// Equal reports whether r and o report the same.
func (r ConsumerReport) Equal(o ConsumerReport) bool {
	return r.Realized == o.Realized && r.Available == o.Available && r.KcpShard == o.KcpShard && r.BaseURL == o.BaseURL &&
		maps.EqualFunc(r.CAs, o.CAs, func(a, b CATrust) bool {
			return slices.Equal(a.Trusted, b.Trusted) && slices.Equal(a.Served, b.Served)
		})
}

// Event is a report of a remote on one of its consumers.
type Event struct {
	ConsumerKey
	// UID is the consumer's: a consumer deleted and made again has another.
	UID string `json:"uid"`
	// Generation is the consumer's metadata.generation the report is of.
	Generation int64 `json:"generation"`
	// Sequence orders the remote's reports of the consumer: it grows with every report, across
	// the remote's restarts too (the remote seeds it from its clock).
	Sequence int64          `json:"sequence"`
	State    ConsumerReport `json:"state"`
}

// maxRetired is how many replaced UIDs a ConsumerState remembers.
const maxRetired = 8

// ConsumerState is what the home keeps of a consumer: the newest report it accepted.
type ConsumerState struct {
	// Last is the newest event accepted; its UID is empty before any.
	Last Event
	// Retired are the UIDs of the consumers of the same key that a newer one replaced, the
	// newest last: their late events change nothing.
	Retired []string
}

// Merge is the state of a consumer after the event ev, given prev, and whether what the home
// shows or acts on changed: its UID, generation or report. An event of another consumer key
// or without a UID, a replayed one, one older than the last accepted (a lower generation, or
// a sequence not above the last one's), and a late one of a replaced UID change nothing; an
// event of a new UID replaces the consumer, whatever its numbers. A newer event that reports
// the same is kept (its sequence), but changes nothing the home acts on.
func Merge(prev ConsumerState, ev Event) (ConsumerState, bool) {
	last := prev.Last
	switch {
	case ev.UID == "" || (last.UID != "" && ev.ConsumerKey != last.ConsumerKey) || slices.Contains(prev.Retired, ev.UID):
		return prev, false
	case last.UID == "":
		return ConsumerState{Last: ev, Retired: prev.Retired}, true
	case ev.UID != last.UID:
		retired := append(slices.Clone(prev.Retired), last.UID)
		if len(retired) > maxRetired {
			retired = retired[len(retired)-maxRetired:]
		}
		return ConsumerState{Last: ev, Retired: retired}, true
	case ev.Generation < last.Generation || ev.Sequence <= last.Sequence:
		return prev, false
	}
	changed := ev.Generation != last.Generation || !ev.State.Equal(last.State)
	return ConsumerState{Last: ev, Retired: prev.Retired}, changed
}
