package upgrade

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kcp-setups/apiserver/pkg/kcpversion"
)

// TestRefusals is the refusal table: which moves of a setup's release are refused, and why.
func TestRefusals(t *testing.T) {
	v := kcpversion.MustParse
	for name, tc := range map[string]struct {
		from    []string
		to      string
		refused string
	}{
		"a patch up":                                 {from: []string{"v0.31.4"}, to: "v0.31.6"},
		"the next minor":                             {from: []string{"v0.31.6"}, to: "v0.32.3"},
		"the same release":                           {from: []string{"v0.32.3"}, to: "v0.32.3"},
		"nothing runs yet":                           {to: "v0.30.0"},
		"a patch down within the minor":              {from: []string{"v0.32.3"}, to: "v0.32.1"},
		"a skipped minor":                            {from: []string{"v0.30.3"}, to: "v0.32.3", refused: "skips minor 0.31: the setup runs or is to run v0.30.3"},
		"a skipped minor from the lowest member":     {from: []string{"v0.31.6", "v0.30.3", "v0.31.6"}, to: "v0.32.0", refused: "skips minor 0.31"},
		"a roll under way to the next minor: on top": {from: []string{"v0.30.3", "v0.31.6"}, to: "v0.31.6"},
		"a downgrade across a minor":                 {from: []string{"v0.32.3"}, to: "v0.31.6", refused: "is a downgrade across a minor: the setup runs or is to run v0.32.3"},
		"back from a roll half done":                 {from: []string{"v0.31.6", "v0.32.3"}, to: "v0.31.6", refused: "downgrade across a minor"},
		"a member on main says nothing":              {from: []string{"main", "v0.31.6"}, to: "v0.32.3"},
		"empty tags say nothing":                     {from: []string{"", "v0.32.3"}, to: "v0.32.3"},
	} {
		t.Run(name, func(t *testing.T) {
			err := CheckChange(Runs(tc.from...), v(tc.to))
			if tc.refused == "" {
				assert.NoError(t, err)
				return
			}
			if assert.Error(t, err) {
				assert.Contains(t, err.Error(), tc.refused)
			}
		})
	}
}

// TestPinnedMembers: a member that pins its tag may be one minor from its setup's release,
// with a warning; two is refused; the same release says nothing.
func TestPinnedMembers(t *testing.T) {
	for name, tc := range map[string]struct {
		release, pinned  string
		warning, refused string
	}{
		"the setup's release":        {release: "v0.32.3", pinned: "v0.32.3"},
		"another patch: a warning":   {release: "v0.32.3", pinned: "v0.32.1", warning: "pins v0.32.1 and does not follow the setup's v0.32.3"},
		"one minor below: a warning": {release: "v0.32.3", pinned: "v0.31.6", warning: "pins v0.31.6"},
		"one minor above: a warning": {release: "v0.31.6", pinned: "v0.32.3", warning: "pins v0.32.3"},
		"two minors below: refused":  {release: "v0.32.3", pinned: "v0.30.3", refused: "pins v0.30.3, more than one minor from the setup's v0.32.3"},
		"two minors above: refused":  {release: "v0.30.0", pinned: "v0.32.0", refused: "more than one minor"},
		"a tag that is no release":   {release: "v0.32.3", pinned: "main", warning: `pins image tag "main", which is no release`},
	} {
		t.Run(name, func(t *testing.T) {
			warning, err := CheckPinned(kcpversion.MustParse(tc.release), tc.pinned)
			if tc.refused != "" {
				if assert.Error(t, err) {
					assert.Contains(t, err.Error(), tc.refused)
				}
				return
			}
			assert.NoError(t, err)
			if tc.warning == "" {
				assert.Empty(t, warning)
			} else {
				assert.Contains(t, warning, tc.warning)
			}
		})
	}
}

func TestCacheServerEtcd(t *testing.T) {
	assert.NoError(t, CheckCacheServerEtcd(kcpversion.MustParse("v0.31.0")))
	assert.ErrorContains(t, CheckCacheServerEtcd(kcpversion.MustParse("v0.30.3")), "the cache server of kcp v0.30.3 has only its embedded etcd")
}

func TestReleaseNames(t *testing.T) {
	names := ReleaseNames()
	assert.Len(t, names, len(kcpversion.Releases))
	assert.Contains(t, names, "v0.31.6")
	assert.NotContains(t, names, "v0.31.5")
}
