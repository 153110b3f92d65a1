package main

import (
	"archive/tar"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// makeImage runs `make image` of the repository into dir and returns the digest it wrote.
func makeImage(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("make", "-C", "../../../..", "image", "IMAGE_DIR="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "make image:\n%s", out)
	digest, err := os.ReadFile(filepath.Join(dir, "digest"))
	require.NoError(t, err)
	return strings.TrimSpace(string(digest))
}

// TestImageIsReproducibleAndNonRoot builds the image twice from the same commit and checks
// that both builds are the same image, and what its config says.
func TestImageIsReproducibleAndNonRoot(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	digest := makeImage(t, first)
	require.Equal(t, digest, makeImage(t, second), "two builds of one commit are the same image")

	// The OCI layout holds that image, under its name.
	index, err := layout.ImageIndexFromPath(filepath.Join(first, "oci"))
	require.NoError(t, err)
	manifest, err := index.IndexManifest()
	require.NoError(t, err)
	require.Len(t, manifest.Manifests, 1)
	assert.Equal(t, digest, manifest.Manifests[0].Digest.String())
	assert.Equal(t, "ghcr.io/kcp-setups/apiserver:latest", manifest.Manifests[0].Annotations["org.opencontainers.image.ref.name"])
	img, err := index.Image(manifest.Manifests[0].Digest)
	require.NoError(t, err)

	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, "65532:65532", cfg.Config.User, "non-root, as the install manifests' runAsUser")
	assert.Equal(t, []string{"/kcp-setups-apiserver"}, cfg.Config.Entrypoint)
	assert.Equal(t, "linux", cfg.OS)
	rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSpace(string(rev)), cfg.Config.Labels["org.opencontainers.image.revision"])
	assert.Equal(t, "https://github.com/kcp-setups/apiserver", cfg.Config.Labels["org.opencontainers.image.source"])
	assert.Regexp(t, `^v0\.0\.0-\d{14}-[0-9a-f]{12}$`, cfg.Config.Labels["org.opencontainers.image.version"])
	epoch, err := exec.Command("git", "log", "-1", "--format=%ct").Output()
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSpace(string(epoch)), strconv.FormatInt(cfg.Created.Unix(), 10), "dated by the commit")

	// The tarball docker load reads holds the same config and layers; its manifest is
	// docker's, which a loader makes anew, so only these compare.
	fromTar, err := tarball.ImageFromPath(filepath.Join(first, "kcp-setups-apiserver.tar"), nil)
	require.NoError(t, err)
	tarConfig, err := fromTar.ConfigName()
	require.NoError(t, err)
	ociConfig, err := img.ConfigName()
	require.NoError(t, err)
	assert.Equal(t, ociConfig, tarConfig, "the tarball's config is the layout's")

	// The binary is in the image, executable, and static: it runs here as it is.
	layers, err := img.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 2, "the base, then the binary")
	files := layerFiles(t, layers[1])
	require.Contains(t, files, "kcp-setups-apiserver")
	assert.Equal(t, int64(0o755), files["kcp-setups-apiserver"].Mode)
	base := layerFiles(t, layers[0])
	assert.Contains(t, string(base["etc/passwd"].data), "nonroot:x:65532:65532:")
	assert.Equal(t, int64(0o1777), base["tmp/"].Mode)
	out, err := exec.Command(filepath.Join(first, "kcp-setups-apiserver"), "--help").CombinedOutput()
	require.NoError(t, err, "%s", out)
	file, err := exec.Command("go", "version", "-m", filepath.Join(first, "kcp-setups-apiserver")).Output()
	require.NoError(t, err)
	assert.Contains(t, string(file), "CGO_ENABLED=0", "a static binary")
	assert.Contains(t, string(file), "-trimpath=true")
}

// entry is a layer's file: its mode and content.
type entry struct {
	Mode int64
	data []byte
}

// layerFiles are the entries of a layer, by name.
func layerFiles(t *testing.T, l v1.Layer) map[string]entry {
	t.Helper()
	rc, err := l.Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	files := map[string]entry{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		require.NoError(t, err)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		files[h.Name] = entry{Mode: h.Mode, data: data}
	}
}
