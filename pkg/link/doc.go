// Package link is the core of the listener a RootShard's remote consumers talk to over
// mutual TLS (docs/links.md): who may ask what (Authorize, against the declared
// Links and the link CA trust of their RootShards), which certificate signing requests a
// consumer kind may have signed (CheckCSR, the policy as data, derived from the builders),
// how the events a remote reports are merged (Merge), the limits each declaration is held
// to (Limiter), and the HTTP middleware that puts them in front of the listener's routes
// (Listener).
//
// It does not depend on the Link API type: the server turns each Link into a Declaration
// and each RootShard's link CA into a Trust. Everything but the middleware and the limiter's
// state is pure.
package link
