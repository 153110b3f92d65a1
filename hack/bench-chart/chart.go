package main

import (
	"encoding/xml"
	"fmt"
	"strings"
	"time"
)

// results is what the chart reads of results.json: the latest entry of each benchmark.
type results struct {
	Latest map[string]entry `json:"latest"`
}

type entry struct {
	Time    time.Time `json:"time"`
	Machine struct {
		CPUs      int    `json:"cpus"`
		GoVersion string `json:"goVersion"`
		Commit    string `json:"commit"`
		Dirty     bool   `json:"dirty"`
	} `json:"machine"`
	Figures []struct {
		Name  string  `json:"name"`
		Value float64 `json:"value"`
		Unit  string  `json:"unit"`
	} `json:"figures"`
}

// figure is the value of a figure of the entry, or false.
func (e entry) figure(name, unit string) (float64, bool) {
	for _, f := range e.Figures {
		if f.Name == name && f.Unit == unit {
			return f.Value, true
		}
	}
	return 0, false
}

// bar is one figure of a panel.
type bar struct {
	label, figure string
	// anchor marks the figures others compare with; against names the anchor of a figure.
	anchor  bool
	against string
	// group starts a group of bars, set apart from the ones before.
	group bool
}

// panel is one benchmark's bars, on a scale of their own.
type panel struct {
	benchmark, unit, title string
	// format prints a value.
	format string
	bars   []bar
}

var panels = []panel{
	{benchmark: "mint", unit: "ops/s", format: "%.0f/s",
		title: "Mints per second, through the kubeconfig subresource (higher is better)",
		bars: []bar{
			{label: "kubeconfig, directly, 16 clients", figure: "kubeconfig-direct/rate", against: "tokenrequest/rate"},
			{label: "kubeconfig, aggregated, 16 clients", figure: "kubeconfig-aggregated/rate", against: "tokenrequest/rate"},
			{label: "dry run (no credential), directly", figure: "kubeconfig-direct-dryrun/rate", against: "tokenrequest/rate"},
			{label: "dry run (no credential), aggregated", figure: "kubeconfig-aggregated-dryrun/rate", against: "tokenrequest/rate"},
			{label: "TokenRequest, 16 clients", figure: "tokenrequest/rate", anchor: true},
			{label: "kubeconfig, aggregated, 200 clients", figure: "kubeconfig-aggregated-200/rate", against: "tokenrequest-200/rate", group: true},
			{label: "TokenRequest, 200 clients", figure: "tokenrequest-200/rate", anchor: true},
		}},
	{benchmark: "ready", unit: "s", format: "%.1f s",
		title: "Seconds from apply to Running, every Certificate Ready (lower is better)",
		bars: []bar{
			{label: "cert-manager chain alone, ECDSA P-256", figure: "cert-manager-chain-ecdsa-p256", anchor: true},
			{label: "RootShard, ECDSA P-256", figure: "rootshard-ecdsa-p256", against: "cert-manager-chain-ecdsa-p256"},
			{label: "whole setup, ECDSA P-256", figure: "setup-ecdsa-p256", against: "cert-manager-chain-ecdsa-p256"},
			{label: "cert-manager chain alone, RSA 4096", figure: "cert-manager-chain-rsa-4096", anchor: true, group: true},
			{label: "RootShard, RSA 4096", figure: "rootshard-rsa-4096", against: "cert-manager-chain-rsa-4096"},
			{label: "whole setup, RSA 4096", figure: "setup-rsa-4096", against: "cert-manager-chain-rsa-4096"},
		}},
}

// The chart's geometry, in pixels, and its colours.
const (
	width      = 780
	labelRight = 290 // where the labels end
	barLeft    = 300
	barMax     = 330 // the longest bar of a panel
	rowHeight  = 24
	barHeight  = 17
	groupGap   = 8
	measured   = "#3366cc"
	anchor     = "#a0a0a0"
	muted      = "#555555"
)

// The SVG elements the chart uses; encoding/xml escapes their text and attributes.
type (
	svg struct {
		XMLName    xml.Name `xml:"svg"`
		Xmlns      string   `xml:"xmlns,attr"`
		Width      int      `xml:"width,attr"`
		Height     int      `xml:"height,attr"`
		ViewBox    string   `xml:"viewBox,attr"`
		FontFamily string   `xml:"font-family,attr"`
		FontSize   int      `xml:"font-size,attr"`
		Children   []any
	}
	rect struct {
		XMLName xml.Name `xml:"rect"`
		Class   string   `xml:"class,attr"`
		X       float64  `xml:"x,attr"`
		Y       float64  `xml:"y,attr"`
		Width   float64  `xml:"width,attr"`
		Height  float64  `xml:"height,attr"`
		Fill    string   `xml:"fill,attr"`
		Title   string   `xml:"title,omitempty"`
	}
	text struct {
		XMLName    xml.Name `xml:"text"`
		Class      string   `xml:"class,attr"`
		X          float64  `xml:"x,attr"`
		Y          float64  `xml:"y,attr"`
		Anchor     string   `xml:"text-anchor,attr,omitempty"`
		FontWeight string   `xml:"font-weight,attr,omitempty"`
		FontSize   int      `xml:"font-size,attr,omitempty"`
		Fill       string   `xml:"fill,attr,omitempty"`
		Text       string   `xml:",chardata"`
	}
)

// draw returns the chart of the latest entries of r as SVG, and how many bars it holds: one
// per figure found. A panel whose benchmark has none of its figures is left out.
func draw(r results) ([]byte, int, error) {
	doc := svg{Xmlns: "http://www.w3.org/2000/svg", Width: width, FontFamily: "sans-serif", FontSize: 13}
	add := func(e any) { doc.Children = append(doc.Children, e) }
	y := 24.0
	add(rect{Class: "legend", X: barLeft, Y: y - 11, Width: 12, Height: 12, Fill: measured})
	add(text{Class: "legend", X: barLeft + 18, Y: y, Text: "kcp-setups"})
	add(rect{Class: "legend", X: barLeft + 110, Y: y - 11, Width: 12, Height: 12, Fill: anchor})
	add(text{Class: "legend", X: barLeft + 128, Y: y, Text: "anchor, measured in the same run"})
	bars := 0
	for _, p := range panels {
		e, ok := r.Latest[p.benchmark]
		if !ok {
			continue
		}
		var present []bar
		var values []float64
		top := 0.0
		for _, b := range p.bars {
			if v, ok := e.figure(b.figure, p.unit); ok {
				present = append(present, b)
				values = append(values, v)
				top = max(top, v)
			}
		}
		if len(present) == 0 {
			continue
		}
		y += 34
		add(text{Class: "title", X: 10, Y: y, FontWeight: "bold", FontSize: 15, Text: p.title})
		y += 18
		add(text{Class: "machine", X: 10, Y: y, FontSize: 11, Fill: muted, Text: describe(e)})
		y += 8
		for i, b := range present {
			if b.group && i > 0 {
				y += groupGap
			}
			v := values[i]
			length := barMax * v / top
			if top == 0 {
				length = 0
			}
			fill, class := measured, "bar"
			if b.anchor {
				fill, class = anchor, "bar anchor"
			}
			value := fmt.Sprintf(p.format, v)
			if against, ok := e.figure(b.against, p.unit); ok && against > 0 {
				value += " (" + ratio(v/against) + ")"
			}
			add(text{Class: "label", X: labelRight, Y: y + 13, Anchor: "end", Text: b.label})
			add(rect{Class: class, X: barLeft, Y: y + 1, Width: round(max(length, 1)), Height: barHeight, Fill: fill,
				Title: b.label + ": " + fmt.Sprintf(p.format, v)})
			add(text{Class: "value", X: round(barLeft + max(length, 1) + 6), Y: y + 13, Text: value})
			y += rowHeight
			bars++
		}
	}
	if bars == 0 {
		return nil, 0, nil
	}
	y += 10
	add(text{Class: "note", X: 10, Y: y, FontSize: 11, Fill: muted, Text: "(×) is the ratio to the anchor of its group. Generated by hack/bench-chart from _output/bench/results.json."})
	doc.Height = int(y) + 12
	doc.ViewBox = fmt.Sprintf("0 0 %d %d", doc.Width, doc.Height)
	out, err := xml.MarshalIndent(doc, "", " ")
	if err != nil {
		return nil, 0, err
	}
	return append([]byte(xml.Header), append(out, '\n')...), bars, nil
}

// describe says where an entry was measured.
func describe(e entry) string {
	parts := []string{fmt.Sprintf("%d CPUs", e.Machine.CPUs), e.Machine.GoVersion}
	if c := e.Machine.Commit; c != "" {
		if len(c) > 7 {
			c = c[:7]
		}
		if e.Machine.Dirty {
			c += " (modified)"
		}
		parts = append(parts, "commit "+c)
	}
	if !e.Time.IsZero() {
		parts = append(parts, e.Time.UTC().Format("2006-01-02 15:04 MST"))
	}
	return strings.Join(parts, " · ")
}

// ratio prints a ratio as docs/performance.md does: two decimals below 1, one above.
func ratio(r float64) string {
	if r < 1 {
		return fmt.Sprintf("%.2f×", r)
	}
	return fmt.Sprintf("%.1f×", r)
}

func round(v float64) float64 { return float64(int(v*10+0.5)) / 10 }
