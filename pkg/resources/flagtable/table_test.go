package flagtable

import "github.com/kcp-setups/apiserver/pkg/kcpversion"

// The components whose command lines the builders write.
const (
	kcpStart    = "kcp start"
	frontProxy  = "kcp-front-proxy"
	cacheServer = "cache-server"
	// virtualWorkspaces is kcp's standalone virtual-workspaces server; a third-party server's
	// command line is checked against it too, since it only gets the flags every server of
	// kcp's virtual-workspace framework shares.
	virtualWorkspaces = "virtual-workspaces"
	// etcdMember is a managed etcd's member. Its image is etcd's, not kcp's, so its flags are
	// those of the etcd release the builders default to, at every kcp release.
	etcdMember = "etcd"
)

// span is a range of kcp releases: from since on, up to but not including until (none when
// empty).
type span struct{ since, until string }

func (s span) has(v kcpversion.Version) bool {
	if !v.AtLeast(kcpversion.MustParse(s.since)) {
		return false
	}
	return s.until == "" || !v.AtLeast(kcpversion.MustParse(s.until))
}

// flagDef is where kcp defines a flag of a component, and in which releases.
type flagDef struct {
	// spans are the releases that define the flag; always is every release kcp-setups runs.
	spans []span
	// source is the kcp file that defines it, path@tag.
	source string
}

var always = []span{{since: "v0.30.0"}}

// Sources that many flags share.
const (
	// kcp start lets the upstream kube-apiserver flags in this allow list through.
	kcpAllowed     = "pkg/server/options/flags.go@v0.30.0 (allowedFlags)"
	kcpOptions     = "pkg/server/options/options.go@v0.30.0 (ExtraOptions.AddFlags)"
	kcpAuthz       = "pkg/server/options/authorization.go@v0.30.0"
	proxyOptions   = "pkg/proxy/options/options.go@v0.30.0 (SecureServing.AddFlags and the proxy flag set)"
	proxyAuthn     = "pkg/proxy/options/authentication.go@v0.30.0 (BuiltInAuthenticationOptions WithClientCert, WithOIDC, WithServiceAccounts, WithTokenFile, WithRequestHeader, WithWebHook)"
	cacheOptions30 = "pkg/cache/server/options/options.go@v0.30.0 (SecureServing.AddFlags, EmbeddedEtcd.AddFlags)"
	cacheOptions31 = "pkg/cache/server/options/options.go@v0.31.0 (Etcd.AddFlags, logsapiv1.AddFlags)"
	vwServing      = "cmd/virtual-workspaces/options/options.go@v0.30.0 (SecureServing.AddFlags)"
	// The delegating authentication of k8s.io/apiserver's pkg/server/options/authentication.go:
	// client certificates, request headers and --authentication-kubeconfig.
	vwAuthn = "cmd/virtual-workspaces/options/options.go@v0.30.0 (Authentication.AddFlags, DelegatingAuthenticationOptions)"
	// etcdFlags is etcd's, not kcp's: go.etcd.io/etcd/server/v3@v3.7.0.
	etcdFlags = "etcd server/embed/config.go@v3.7.0 (Config.AddFlags)"
)

// flags is every flag the builders emit, per component, with the releases that define it
// (docs/kcp-versions.md, "kcp's flags by release"). A builder that starts emitting a flag adds it here,
// with its source.
var flags = map[string]map[string]flagDef{
	kcpStart: {
		// kube-controller-manager's service account controller options, added by
		// Controllers.AddFlags (c.SAController.AddFlags).
		"--root-ca-file":                     {always, "pkg/server/options/controllers.go@v0.30.0 (SAController.AddFlags)"},
		"--service-account-private-key-file": {always, "pkg/server/options/controllers.go@v0.30.0 (SAController.AddFlags)"},
		"--enable-leader-election":           {always, "pkg/server/options/controllers.go@v0.30.0"},

		"--client-ca-file":                           {always, kcpAllowed},
		"--requestheader-client-ca-file":             {always, kcpAllowed},
		"--requestheader-allowed-names":              {always, kcpAllowed},
		"--requestheader-username-headers":           {always, kcpAllowed},
		"--requestheader-group-headers":              {always, kcpAllowed},
		"--requestheader-extra-headers-prefix":       {always, kcpAllowed},
		"--tls-cert-file":                            {always, kcpAllowed},
		"--tls-private-key-file":                     {always, kcpAllowed},
		"--service-account-key-file":                 {always, kcpAllowed},
		"--service-account-lookup":                   {always, kcpAllowed},
		"--token-auth-file":                          {always, kcpAllowed},
		"--authentication-token-webhook-config-file": {always, kcpAllowed},
		"--authentication-token-webhook-cache-ttl":   {always, kcpAllowed},
		"--authentication-token-webhook-version":     {always, kcpAllowed},
		"--logging-format":                           {always, kcpAllowed},
		"-v":                                         {always, kcpAllowed},
		"--etcd-servers":                             {always, kcpAllowed},
		"--etcd-prefix":                              {always, kcpAllowed},
		"--etcd-certfile":                            {always, kcpAllowed},
		"--etcd-keyfile":                             {always, kcpAllowed},
		"--etcd-cafile":                              {always, kcpAllowed},
		"--oidc-issuer-url":                          {always, kcpAllowed},
		"--oidc-client-id":                           {always, kcpAllowed},
		"--oidc-groups-claim":                        {always, kcpAllowed},
		"--oidc-username-claim":                      {always, kcpAllowed},
		"--oidc-groups-prefix":                       {always, kcpAllowed},
		"--oidc-username-prefix":                     {always, kcpAllowed},
		"--oidc-ca-file":                             {always, kcpAllowed},
		"--audit-policy-file":                        {always, kcpAllowed},
		"--audit-webhook-config-file":                {always, kcpAllowed},
		"--audit-webhook-mode":                       {always, kcpAllowed},
		"--audit-webhook-batch-max-wait":             {always, kcpAllowed},
		"--audit-webhook-batch-throttle-qps":         {always, kcpAllowed},
		// Upstream in v0.30.x; from v0.31.0 a hidden no-op of kcp's own
		// (pkg/server/options/options.go@v0.31.0), which the builders no longer emit.
		"--external-hostname": {always, kcpAllowed},

		"--shard-base-url":                            {always, kcpOptions},
		"--shard-external-url":                        {always, kcpOptions},
		"--shard-client-cert-file":                    {always, kcpOptions},
		"--shard-client-key-file":                     {always, kcpOptions},
		"--shard-name":                                {always, kcpOptions},
		"--root-shard-kubeconfig-file":                {always, kcpOptions},
		"--logical-cluster-admin-kubeconfig":          {always, kcpOptions},
		"--external-logical-cluster-admin-kubeconfig": {always, kcpOptions},
		"--batteries-included":                        {always, kcpOptions},
		// A shard whose virtual workspaces a VirtualWorkspace serves.
		"--shard-virtual-workspace-url":     {always, kcpOptions},
		"--shard-virtual-workspace-ca-file": {always, kcpOptions},
		"--run-virtual-workspaces":          {always, "pkg/server/options/virtual.go@v0.30.0 (Virtual.AddFlags)"},
		// Backported to v0.31.6; absent from v0.32.0 to v0.32.2.
		"--mount-proxy-client-cert-file": {[]span{{"v0.31.6", "v0.32.0"}, {since: "v0.32.3"}}, "pkg/server/options/options.go@v0.32.3 (and @v0.31.6)"},
		"--mount-proxy-client-key-file":  {[]span{{"v0.31.6", "v0.32.0"}, {since: "v0.32.3"}}, "pkg/server/options/options.go@v0.32.3 (and @v0.31.6)"},

		"--root-directory":   {always, "cmd/kcp/options/generic.go@v0.30.0"},
		"--cache-kubeconfig": {always, "pkg/cache/client/options/cache.go@v0.30.0"},

		"--authorization-webhook-config-file":            {always, kcpAuthz},
		"--authorization-always-allow-paths":             {always, kcpAuthz},
		"--authorization-order":                          {always, kcpAuthz},
		"--authorization-webhook-cache-authorized-ttl":   {always, kcpAuthz},
		"--authorization-webhook-cache-unauthorized-ttl": {always, kcpAuthz},
		"--authorization-webhook-version":                {always, kcpAuthz},
	},
	// A FrontProxy's and a RootShard's internal front proxy's (frontproxy.RootShardProxy)
	// command lines. Every flag of this component is defined the same way at v0.30.0, v0.31.0,
	// v0.32.0 and v0.32.3: pkg/proxy/options/options.go (SecureServing.AddFlags,
	// --mapping-file, --root-kubeconfig, --shards-kubeconfig) and
	// pkg/proxy/options/authentication.go (WithClientCert, WithRequestHeader, …) at each tag.
	frontProxy: {
		"--secure-port":          {always, proxyOptions},
		"--tls-cert-file":        {always, proxyOptions},
		"--tls-private-key-file": {always, proxyOptions},
		"--root-kubeconfig":      {always, proxyOptions},
		"--shards-kubeconfig":    {always, proxyOptions},
		"--mapping-file":         {always, proxyOptions},

		"--authentication-drop-groups":    {always, "pkg/proxy/options/authentication.go@v0.30.0 (Authentication.AddFlags)"},
		"--authentication-pass-on-groups": {always, "pkg/proxy/options/authentication.go@v0.30.0 (Authentication.AddFlags)"},

		"--client-ca-file":                           {always, proxyAuthn},
		"--oidc-issuer-url":                          {always, proxyAuthn},
		"--oidc-client-id":                           {always, proxyAuthn},
		"--oidc-groups-claim":                        {always, proxyAuthn},
		"--oidc-username-claim":                      {always, proxyAuthn},
		"--oidc-groups-prefix":                       {always, proxyAuthn},
		"--oidc-username-prefix":                     {always, proxyAuthn},
		"--oidc-ca-file":                             {always, proxyAuthn},
		"--requestheader-client-ca-file":             {always, proxyAuthn},
		"--requestheader-allowed-names":              {always, proxyAuthn},
		"--requestheader-username-headers":           {always, proxyAuthn},
		"--requestheader-group-headers":              {always, proxyAuthn},
		"--requestheader-extra-headers-prefix":       {always, proxyAuthn},
		"--service-account-key-file":                 {always, proxyAuthn},
		"--service-account-lookup":                   {always, proxyAuthn},
		"--token-auth-file":                          {always, proxyAuthn},
		"--authentication-token-webhook-config-file": {always, proxyAuthn},
		"--authentication-token-webhook-cache-ttl":   {always, proxyAuthn},
		"--authentication-token-webhook-version":     {always, proxyAuthn},

		"-v": {always, "cmd/kcp-front-proxy/main.go@v0.30.0 (component-base cli.Run)"},
	},
	cacheServer: {
		"--tls-cert-file":           {always, cacheOptions30},
		"--tls-private-key-file":    {always, cacheOptions30},
		"--embedded-etcd-directory": {always, cacheOptions30},
		"--root-directory":          {always, "cmd/cache-server/main.go@v0.30.0"},
		"-v":                        {always, "cmd/cache-server/main.go@v0.30.0 (component-base cli.Run)"},

		"--client-ca-file": {[]span{{since: "v0.30.2"}}, "pkg/cache/server/options/authentication.go@v0.30.2"},

		"--etcd-servers":   {[]span{{since: "v0.31.0"}}, cacheOptions31},
		"--etcd-prefix":    {[]span{{since: "v0.31.0"}}, cacheOptions31},
		"--etcd-certfile":  {[]span{{since: "v0.31.0"}}, cacheOptions31},
		"--etcd-keyfile":   {[]span{{since: "v0.31.0"}}, cacheOptions31},
		"--etcd-cafile":    {[]span{{since: "v0.31.0"}}, cacheOptions31},
		"--logging-format": {[]span{{since: "v0.31.0"}}, cacheOptions31},
	},
	virtualWorkspaces: {
		"--secure-port":          {always, vwServing},
		"--tls-cert-file":        {always, vwServing},
		"--tls-private-key-file": {always, vwServing},

		"--client-ca-file":                     {always, vwAuthn},
		"--requestheader-client-ca-file":       {always, vwAuthn},
		"--requestheader-allowed-names":        {always, vwAuthn},
		"--requestheader-username-headers":     {always, vwAuthn},
		"--requestheader-group-headers":        {always, vwAuthn},
		"--requestheader-extra-headers-prefix": {always, vwAuthn},
		"--authentication-kubeconfig":          {always, vwAuthn},

		"--kubeconfig":       {always, "cmd/virtual-workspaces/options/options.go@v0.30.0"},
		"--cache-kubeconfig": {always, "pkg/cache/client/options/cache.go@v0.30.0 (Cache.AddFlags of cmd/virtual-workspaces/options/options.go)"},
		// Required before v0.31.0; from v0.31.0 a hidden no-op, which the builder no longer
		// emits.
		"--shard-external-url":                        {always, "cmd/virtual-workspaces/options/options.go@v0.30.0"},
		"--external-logical-cluster-admin-kubeconfig": {[]span{{since: "v0.31.2"}}, "cmd/virtual-workspaces/options/options.go@v0.31.2"},
		// The flag is logsapiv1.AddFlags' in every release, but its value json is registered
		// only from v0.31.0 (the import of pkg/logging/json/register); before, it fails
		// validation and the server exits.
		"--logging-format": {[]span{{since: "v0.31.0"}}, "cmd/virtual-workspaces/options/options.go@v0.31.0 (logsapiv1.AddFlags, pkg/logging/json/register)"},
		"-v":               {always, "cmd/virtual-workspaces/options/options.go@v0.30.0 (logsapiv1.AddFlags)"},
	},
	etcdMember: {
		"--name":                        {always, etcdFlags},
		"--data-dir":                    {always, etcdFlags},
		"--listen-peer-urls":            {always, etcdFlags},
		"--listen-client-urls":          {always, etcdFlags},
		"--listen-metrics-urls":         {always, etcdFlags},
		"--advertise-client-urls":       {always, etcdFlags},
		"--initial-advertise-peer-urls": {always, etcdFlags},
		"--initial-cluster":             {always, etcdFlags},
		"--initial-cluster-state":       {always, etcdFlags},
		"--initial-cluster-token":       {always, etcdFlags},
		"--client-cert-auth":            {always, etcdFlags},
		"--trusted-ca-file":             {always, etcdFlags},
		"--cert-file":                   {always, etcdFlags},
		"--key-file":                    {always, etcdFlags},
		"--peer-client-cert-auth":       {always, etcdFlags},
		"--peer-trusted-ca-file":        {always, etcdFlags},
		"--peer-cert-file":              {always, etcdFlags},
		"--peer-key-file":               {always, etcdFlags},
		"--auto-compaction-mode":        {always, etcdFlags},
		"--auto-compaction-retention":   {always, etcdFlags},
	},
}
