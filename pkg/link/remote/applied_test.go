package remote

import (
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// TestApplied: a Certificate counts as ours by the UID the applier returned at its name;
// before a consumer's first apply since the start it is not known yet; a forged one, of
// another name or UID, is not ours once the consumer was applied; a deleted one is forgotten,
// and a Certificate of another issuer is not recorded.
func TestApplied(t *testing.T) {
	ours := shardCertificate()
	forged := shardCertificate()
	forged.Name, forged.UID = "forged", "uid-forged"
	again := shardCertificate()
	again.UID = "uid-again"
	a := NewApplied()

	assert.Equal(t, NotYet, a.Of(ours, shardUID), "nothing applied since the start")
	assert.Equal(t, NotYet, a.Of(forged, shardUID), "nothing applied since the start")

	a.Record(ours)
	assert.Equal(t, Ours, a.Of(ours, shardUID))
	assert.Equal(t, NotOurs, a.Of(forged, shardUID), "a name the applier never returned")
	assert.Equal(t, NotOurs, a.Of(again, shardUID), "another UID at our name")
	assert.Equal(t, NotOurs, a.Of(ours, "uid-other-shard"), "ours, but named for another consumer")
	assert.Equal(t, NotYet, a.Of(forged, "uid-other-shard"), "a consumer not applied yet")

	a.Forget(cache.DeletedFinalStateUnknown{Obj: again})
	assert.Equal(t, Ours, a.Of(ours, shardUID), "the deletion of another UID forgets nothing")
	a.Forget(ours)
	assert.Equal(t, NotYet, a.Of(ours, shardUID), "deleted: forgotten, the consumer too")
	assert.Empty(t, a.certificates)
	assert.Empty(t, a.owners)

	a.Record(ours)
	a.Record(again)
	assert.Equal(t, NotOurs, a.Of(ours, shardUID), "made again: the new UID replaces the old")
	assert.Equal(t, Ours, a.Of(again, shardUID))
	assert.Equal(t, map[types.UID]int{shardUID: 1}, a.owners, "one Certificate counted once")

	other := shardCertificate()
	other.Name, other.UID, other.Spec.IssuerRef = "other-issuer", "uid-other-issuer", cmv1.CertificateSpec{}.IssuerRef
	a.Record(other)
	noOwner := shardCertificate()
	noOwner.Name, noOwner.UID = "no-owner", "uid-no-owner"
	delete(noOwner.Labels, pki.LabelOwnerUID)
	a.Record(noOwner)
	assert.Len(t, a.certificates, 1, "only the LinkIssuer's Certificates of a consumer are recorded")
}
