// Package link realizes Links at home (docs/links.md): each Link's client certificate,
// signed by its RootShard's link CA (which the RootShard's controller applies while a Link
// names it), and its bootstrap Secret once the listener's URL is known, and reports back
// through status.
package link

import (
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
)

// Controller reconciles Links.
type Controller struct {
	kinds.LinkBase
	// listenerURL is where the remotes reach this server's link listener (Deps): empty while
	// it serves none, and then no bootstrap Secret is written.
	listenerURL string
}

// New sets up a Link controller reading our kinds and the host cluster's objects from the
// informers of its deps, and writing to the host cluster through them.
var New = controller.Setup[Controller](kinds.Link)

// Configure reads the listener's URL from deps (controller.Configured).
func (c *Controller) Configure(deps controller.Deps) { c.listenerURL = deps.LinkListenerURL }
