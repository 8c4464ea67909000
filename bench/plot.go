package bench

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"slices"

	"github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// maxNines is the rightmost percentile of the distribution plot: 99.999%.
const maxNines = 5

var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
}

// PlotPhases draws a PNG of two panels: the latency percentile distribution
// of every operation of every phase (service time dashed, for open-loop
// phases), and each phase's latency over time (p50, p99, max per second).
func PlotPhases(path, title string, phases []*PhaseResult) error {
	dist, err := distributionPlot(title, phases)
	if err != nil {
		return err
	}
	over, err := timelinePlot(phases)
	if err != nil {
		return err
	}
	img := vgimg.NewWith(vgimg.UseWH(9*vg.Inch, 10*vg.Inch), vgimg.UseBackgroundColor(color.White))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadX: vg.Millimeter, PadY: 4 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	plots := [][]*plot.Plot{{dist}, {over}}
	canvases := plot.Align(plots, tiles, dc)
	dist.Draw(canvases[0][0])
	over.Draw(canvases[1][0])
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cannot create the plot: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("cannot write the plot: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("cannot write the plot: %w", err)
	}
	return nil
}

// nines maps a percentile (0 to 100) to the x of the distribution plot:
// 90% is 1, 99% is 2, 99.9% is 3.
func nines(pct float64) float64 {
	if pct >= 100 {
		return maxNines
	}
	return min(-math.Log10(1-pct/100), maxNines)
}

// ninesTicks labels the distribution plot's x axis at 0%, 90%, 99%, ...
type ninesTicks struct{}

var ninesLabels = [maxNines + 1]string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"}

func (ninesTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for n, label := range ninesLabels {
		if float64(n) >= lo && float64(n) <= hi {
			out = append(out, plot.Tick{Value: float64(n), Label: label})
		}
	}
	return out
}

func distributionPlot(title string, phases []*PhaseResult) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title + "\nlatency by percentile, from the intended send time (dashed: from the actual send)"
	p.X.Label.Text = "percentile"
	p.X.Tick.Marker = ninesTicks{}
	p.X.Min, p.X.Max = 0, maxNines
	p.Y.Label.Text = "latency (ms, log)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = false, false // the curves rise to the right
	p.Add(plotter.NewGrid())
	c := 0
	for _, ph := range phases {
		lat, svc := ph.rec.Histograms()
		for _, op := range sortedKeys(lat) {
			name := op
			if len(phases) > 1 {
				name = ph.Name + " " + op
			}
			if err := addCurve(p, lat[op].CumulativeDistribution(), name, palette[c%len(palette)], false); err != nil {
				return nil, err
			}
			if ph.Mode == ModeOpen {
				if err := addCurve(p, svc[op].CumulativeDistribution(), name+" (service time)", palette[c%len(palette)], true); err != nil {
					return nil, err
				}
			}
			c++
		}
	}
	return p, nil
}

func addCurve(p *plot.Plot, dist []hdrhistogram.Bracket, name string, col color.Color, dashed bool) error {
	var pts plotter.XYs
	for _, b := range dist {
		if b.Count == 0 {
			continue
		}
		pts = append(pts, plotter.XY{X: nines(b.Quantile), Y: math.Max(float64(b.ValueAt)/1000, 0.001)})
	}
	if len(pts) == 0 {
		return nil
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("cannot plot %s: %w", name, err)
	}
	l.Color, l.Width = col, vg.Points(1.5)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}

func timelinePlot(phases []*PhaseResult) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "latency over time (per second: p50 solid, p99 dashed, max dotted)"
	p.X.Label.Text = "seconds since the phase started"
	p.Y.Label.Text = "latency (ms, log)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	for i, ph := range phases {
		col := palette[i%len(palette)]
		for _, s := range []struct {
			name   string
			get    func(TimePoint) float64
			dashes []vg.Length
		}{
			{"p50", func(t TimePoint) float64 { return t.P50 }, nil},
			{"p99", func(t TimePoint) float64 { return t.P99 }, []vg.Length{vg.Points(4), vg.Points(3)}},
			{"max", func(t TimePoint) float64 { return t.Max }, []vg.Length{vg.Points(1), vg.Points(2)}},
		} {
			var pts plotter.XYs
			for _, t := range ph.Timeline {
				if t.Count > 0 {
					pts = append(pts, plotter.XY{X: float64(t.Second) + 0.5, Y: math.Max(s.get(t), 0.001)})
				}
			}
			if len(pts) == 0 {
				continue
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return nil, fmt.Errorf("cannot plot the timeline of %s: %w", ph.Name, err)
			}
			l.Color, l.Width, l.Dashes = col, vg.Points(1.2), s.dashes
			p.Add(l)
			p.Legend.Add(ph.Name+" "+s.name, l)
		}
	}
	return p, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
