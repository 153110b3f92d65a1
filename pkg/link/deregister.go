package link

import (
	"net/url"
	"slices"
)

// DeregisterPath is the route by which a remote asks the home to delete kcp's Shard object
// of one of its linked Shards, being deleted: POST /v1/deregister/{kind} with a
// DeregisterRequest. Only Shards are registered in kcp.
const DeregisterPath = "/v1/deregister/"

// Deregister asks kcp's Shard object of a linked Shard to be deleted from the home's root
// workspace.
const Deregister Operation = "deregister"

// DeregisterRequest is the body of POST /v1/deregister/{kind}.
type DeregisterRequest struct {
	// Consumer is the remote consumer being deleted; its kind is the route's.
	Consumer ConsumerRef `json:"consumer"`
}

// The answers of POST /v1/deregister/{kind} that leave kcp's Shard in place (409), by the
// reason in their body: asking again changes nothing.
const (
	// NotRegistered: the Link's status.consumers records no kcp shard or base URL for the
	// consumer, or the home reaches no kcp of the Link's RootShard.
	NotRegistered Reason = "NotRegistered"
	// NotMarked: kcp's Shard of that name carries no mark, or another consumer's.
	NotMarked Reason = "NotMarked"
	// BaseURLMismatch: kcp's Shard of that name routes elsewhere than the base URL recorded.
	BaseURLMismatch Reason = "BaseURLMismatch"
	// Replaced: the Link, or kcp's Shard, was made again meanwhile.
	Replaced Reason = "Replaced"
)

// The refusals (403) of POST /v1/deregister/{kind}, beside Authorize's.
const (
	// UnknownConsumer: the Link's status.consumers does not list the consumer.
	UnknownConsumer Reason = "UnknownConsumer"
	// ConsumerMismatch: it lists the consumer under another UID.
	ConsumerMismatch Reason = "ConsumerMismatch"
)

// deregisters reports whether kind is registered in kcp, so deregistered.
func deregisters(kind ConsumerKind) bool { return kind == Shard }

// MayRegister reports whether a linked Shard reported at baseURL under the kcp shard name
// may have kcp's Shard object of that name marked as its: the name is not the root shard's
// own registration ("root"), and the base URL is https with a host within the declaration's
// dnsNames, the names the remote's serving certificates may carry.
func MayRegister(d Declaration, name, baseURL string) bool {
	if name == "" || name == "root" {
		return false
	}
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" || u.User != nil {
		return false
	}
	return slices.ContainsFunc(d.DNSNames, func(declared string) bool { return WithinDNSName(u.Hostname(), declared) })
}
