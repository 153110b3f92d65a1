package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parsed is what a test reads back of a chart: its bars and texts, from a strict XML decode.
type parsed struct {
	bars, anchors int
	texts         []string
	titles        []string
}

func parse(t *testing.T, svg []byte) parsed {
	t.Helper()
	var p parsed
	dec := xml.NewDecoder(bytes.NewReader(svg))
	dec.Strict = true
	var open []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "the chart is not well-formed XML")
		switch tok := tok.(type) {
		case xml.StartElement:
			if len(open) == 0 {
				assert.Equal(t, "svg", tok.Name.Local)
				assert.Equal(t, "http://www.w3.org/2000/svg", tok.Name.Space)
			}
			open = append(open, tok.Name.Local)
			for _, a := range tok.Attr {
				if tok.Name.Local == "rect" && a.Name.Local == "class" {
					classes := strings.Fields(a.Value)
					if classes[0] == "bar" {
						p.bars++
						if len(classes) > 1 && classes[1] == "anchor" {
							p.anchors++
						}
					}
				}
			}
		case xml.EndElement:
			open = open[:len(open)-1]
		case xml.CharData:
			if s := strings.TrimSpace(string(tok)); s != "" && len(open) > 0 {
				switch open[len(open)-1] {
				case "text":
					p.texts = append(p.texts, s)
				case "title":
					p.titles = append(p.titles, s)
				}
			}
		}
	}
	assert.Empty(t, open, "unclosed elements")
	return p
}

// sample are results with every charted figure, as results.json holds them.
func sample(t *testing.T, commit string, drop ...string) results {
	t.Helper()
	type figure struct {
		Name  string  `json:"name"`
		Value float64 `json:"value"`
		Unit  string  `json:"unit"`
	}
	latest := map[string]any{}
	for _, p := range panels {
		var figures []figure
		for i, b := range p.bars {
			if !slices.Contains(drop, b.figure) {
				figures = append(figures, figure{b.figure, float64(100 + 10*i), p.unit})
			}
		}
		// A figure of another unit under the same name is not charted.
		figures = append(figures, figure{p.bars[0].figure, 1, "errors"})
		latest[p.benchmark] = map[string]any{"time": "2026-11-23T22:07:55Z",
			"machine": map[string]any{"cpus": 2, "goVersion": "go1.26.8", "commit": commit}, "figures": figures}
	}
	// Benchmarks the chart does not draw are ignored.
	latest["scale"] = map[string]any{"figures": []figure{{"setups-100/rss", 80, "rss-MiB"}}}
	data, err := json.Marshal(map[string]any{"latest": latest, "runs": []any{}})
	require.NoError(t, err)
	var r results
	require.NoError(t, json.Unmarshal(data, &r))
	return r
}

func TestDraw(t *testing.T) {
	svg, bars, err := draw(sample(t, "47cb0a9963c684fa6bef3f51254a26687e9be61f"))
	require.NoError(t, err)
	p := parse(t, svg)
	assert.Equal(t, 13, bars)
	assert.Equal(t, 13, p.bars, "one bar per figure")
	assert.Equal(t, 4, p.anchors, "TokenRequest twice, and cert-manager's chain with each key")
	for _, panel := range panels {
		assert.Contains(t, p.texts, panel.title)
		for _, b := range panel.bars {
			assert.Contains(t, p.texts, b.label)
		}
	}
	// Values with their unit, and the ratio to the anchor of the group.
	assert.Contains(t, p.texts, "100/s (0.71×)", "kubeconfig directly, 100/s against TokenRequest's 140/s")
	assert.Contains(t, p.texts, "140/s", "an anchor has no ratio")
	assert.Contains(t, p.texts, "110.0 s (1.1×)", "a RootShard's 110 s against the chain's 100 s")
	assert.Contains(t, p.titles, "TokenRequest, 200 clients: 160/s")
	assert.Contains(t, p.texts, "2 CPUs · go1.26.8 · commit 47cb0a9 · 2026-11-23 22:07 UTC")
}

func TestDrawLeavesOutMissingFigures(t *testing.T) {
	svg, bars, err := draw(sample(t, "abc", "tokenrequest-200/rate", "setup-rsa-4096"))
	require.NoError(t, err)
	p := parse(t, svg)
	assert.Equal(t, 11, bars)
	assert.Equal(t, 11, p.bars)
	assert.NotContains(t, p.texts, "TokenRequest, 200 clients")
	assert.Contains(t, p.texts, "150/s", "200 clients' mints, without a ratio when their anchor is missing")

	// A panel without figures is left out, and a chart without any is none.
	r := sample(t, "abc")
	delete(r.Latest, "mint")
	svg, bars, err = draw(r)
	require.NoError(t, err)
	assert.Equal(t, 6, bars)
	assert.NotContains(t, parse(t, svg).texts, panels[0].title)
	_, bars, err = draw(results{})
	require.NoError(t, err)
	assert.Zero(t, bars)
}

func TestDrawEscapes(t *testing.T) {
	svg, _, err := draw(sample(t, `<&"x">`))
	require.NoError(t, err)
	assert.Contains(t, parse(t, svg).texts, "2 CPUs · go1.26.8 · commit <&\"x\"> · 2026-11-23 22:07 UTC")
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "results.json"), filepath.Join(dir, "chart.svg")
	data, err := json.Marshal(sample(t, "abc"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(in, data, 0o644))
	require.NoError(t, run(in, out))
	svg, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, 13, parse(t, svg).bars)

	require.NoError(t, os.WriteFile(in, []byte("{"), 0o644))
	assert.Error(t, run(in, out), "a results.json that does not parse")
	assert.Error(t, run(filepath.Join(dir, "absent.json"), out))
}
