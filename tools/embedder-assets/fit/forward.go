package main

import (
	"math"

	"github.com/viterin/vek/vek32"
)

// maxLen is the model's window: pieces past it are dropped.
const maxLen = 128

// layerNormEps is the layer norm epsilon of the graph.
const layerNormEps = 1e-6

// forward runs the model over a batch of piece-id sequences (each clipped to
// maxLen, none empty) and returns, per sequence, the mean-pooled last hidden
// state (pooled, 512 values each) and the unit output embedding (out).
func (m *model) forward(seqs [][]int32) (pooled, out [][]float32) {
	offsets := make([]int, len(seqs)+1)
	for i, s := range seqs {
		offsets[i+1] = offsets[i] + min(len(s), maxLen)
	}
	n := offsets[len(seqs)]
	x := make([]float32, n*m.embDim)
	for i, s := range seqs {
		for j, id := range s[:offsets[i+1]-offsets[i]] {
			row := x[(offsets[i]+j)*m.embDim : (offsets[i]+j+1)*m.embDim]
			// The graph adds the embedding to itself plus the timing
			// signal (its AddTimingSignal output is scattered back and
			// added to its input), so the input is 2*emb + timing.
			vek32.MulNumber_Into(row, m.emb[int(id)*m.embDim:(int(id)+1)*m.embDim], 2)
			m.addTiming(row, j)
		}
	}
	for i := range m.layers {
		x = m.layers[i].forward(x, n, offsets)
	}
	pooled = make([][]float32, len(seqs))
	out = make([][]float32, len(seqs))
	for i := range seqs {
		p := make([]float32, outDim)
		cnt := offsets[i+1] - offsets[i]
		for t := offsets[i]; t < offsets[i+1]; t++ {
			vek32.Add_Inplace(p, x[t*outDim:(t+1)*outDim])
		}
		vek32.MulNumber_Inplace(p, 1/float32(max(cnt, 1)))
		pooled[i] = p
		out[i] = m.head(p)
	}
	return pooled, out
}

// head applies the tanh dense layer and L2 normalisation to a pooled vector.
func (m *model) head(p []float32) []float32 {
	o := vek32.MatMul(p, m.tanhW, outDim)
	var ss float64
	for k := range o {
		o[k] = float32(math.Tanh(float64(o[k] + m.tanhB[k])))
		ss += float64(o[k]) * float64(o[k])
	}
	inv := float32(1 / math.Sqrt(max(ss, 1e-12)))
	vek32.MulNumber_Inplace(o, inv)
	return o
}

// addTiming adds the sinusoidal position signal: sines then cosines of
// pos times each inverse timescale.
func (m *model) addTiming(row []float32, pos int) {
	half := len(m.invTimescale)
	for k, inv := range m.invTimescale {
		a := float64(float32(pos) * inv)
		row[k] += float32(math.Sin(a))
		row[half+k] += float32(math.Cos(a))
	}
}

// forward runs one layer over n token rows of width l.in, grouped into
// sequences by offsets, and returns n rows of width l.width.
func (l *layer) forward(x []float32, n int, offsets []int) []float32 {
	h := layerNorm(x, n, l.in, l.lnScale, l.lnBias)
	qkv := matmulBias(h, l.qkv, l.qkvBias, n, l.in, 3*l.in)
	att := make([]float32, n*l.in)
	for i := 0; i+1 < len(offsets); i++ {
		l.attend(qkv, att, offsets[i], offsets[i+1])
	}
	y := matmulBias(att, l.out, l.outBias, n, l.in, l.width)
	if l.res != nil {
		vek32.Add_Inplace(y, matmulBias(x, l.res, l.resBias, n, l.in, l.width))
	} else {
		vek32.Add_Inplace(y, x)
	}
	h2 := layerNorm(y, n, l.width, l.ffnScale, l.ffnBias)
	f := matmulBias(h2, l.conv1, l.conv1Bias, n, l.width, l.ffn)
	vek32.Maximum_Inplace(f, make([]float32, len(f)))
	vek32.Add_Inplace(y, matmulBias(f, l.conv2, l.conv2Bias, n, l.ffn, l.width))
	return y
}

// attend computes multi-head self-attention for the tokens [lo, hi) of one
// sequence; qkv rows hold q, k and v side by side.
func (l *layer) attend(qkv, att []float32, lo, hi int) {
	d := l.in / l.heads
	w3 := 3 * l.in
	scores := make([]float32, hi-lo)
	tmp := make([]float32, d)
	for hd := range l.heads {
		qo, ko, vo := hd*d, l.in+hd*d, 2*l.in+hd*d
		for i := lo; i < hi; i++ {
			q := qkv[i*w3+qo : i*w3+qo+d]
			best := float32(math.Inf(-1))
			for j := lo; j < hi; j++ {
				s := vek32.Dot(q, qkv[j*w3+ko:j*w3+ko+d]) * l.attnScale
				scores[j-lo] = s
				best = max(best, s)
			}
			var sum float32
			for j := range scores {
				scores[j] = float32(math.Exp(float64(scores[j] - best)))
				sum += scores[j]
			}
			dst := att[i*l.in+hd*d : i*l.in+hd*d+d]
			for j := lo; j < hi; j++ {
				vek32.MulNumber_Into(tmp, qkv[j*w3+vo:j*w3+vo+d], scores[j-lo]/sum)
				vek32.Add_Inplace(dst, tmp)
			}
		}
	}
}

func layerNorm(x []float32, n, d int, scale, bias []float32) []float32 {
	out := make([]float32, len(x))
	for t := range n {
		row := x[t*d : (t+1)*d]
		var mean float64
		for _, v := range row {
			mean += float64(v)
		}
		mean /= float64(d)
		var vr float64
		for _, v := range row {
			vr += (float64(v) - mean) * (float64(v) - mean)
		}
		vr /= float64(d)
		inv := 1 / math.Sqrt(vr+layerNormEps)
		o := out[t*d : (t+1)*d]
		for k, v := range row {
			o[k] = float32((float64(v)-mean)*inv)*scale[k] + bias[k]
		}
	}
	return out
}

// matmulBias returns x (n x in) times w (in x out) plus bias on every row.
func matmulBias(x, w, bias []float32, n, in, out int) []float32 {
	y := make([]float32, n*out)
	vek32.MatMul_Into(y, x, w, in)
	for t := range n {
		vek32.Add_Inplace(y[t*out:(t+1)*out], bias)
	}
	return y
}
