package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// weights holds every float32 tensor of the TF.js graph model by name, with
// the long graph prefixes stripped.
type weights map[string][]float32

// loadWeights reads model.json and its shards from dir.
func loadWeights(dir string) (weights, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "model.json"))
	if err != nil {
		return nil, fmt.Errorf("cannot read model.json: %w", err)
	}
	var m struct {
		WeightsManifest []struct {
			Paths   []string `json:"paths"`
			Weights []struct {
				Name  string `json:"name"`
				Shape []int  `json:"shape"`
				Dtype string `json:"dtype"`
			} `json:"weights"`
		} `json:"weightsManifest"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("cannot decode model.json: %w", err)
	}
	w := weights{}
	for _, g := range m.WeightsManifest {
		var data []byte
		for _, p := range g.Paths {
			b, err := os.ReadFile(filepath.Join(dir, p))
			if err != nil {
				return nil, fmt.Errorf("cannot read shard: %w", err)
			}
			data = append(data, b...)
		}
		for _, spec := range g.Weights {
			n := 1
			for _, d := range spec.Shape {
				n *= d
			}
			if len(data) < 4*n {
				return nil, fmt.Errorf("model.json: weight %s runs past the shards", spec.Name)
			}
			if spec.Dtype == "float32" {
				v := make([]float32, n)
				for i := range v {
					v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
				}
				w[shortName(spec.Name)] = v
			}
			data = data[4*n:]
		}
	}
	return w, nil
}

func shortName(name string) string {
	for _, p := range []string{
		"module_apply_default/Encoder_en/KonaTransformer/",
		"module/Encoder_en/KonaTransformer/",
		"module/Encoder_en/",
		"module/",
	} {
		if s, ok := strings.CutPrefix(name, p); ok {
			return s
		}
	}
	return name
}

// get returns the tensor named name with n elements or records an error.
func (w weights) get(name string, n int, errs *[]string) []float32 {
	v, ok := w[name]
	if !ok || len(v) != n {
		*errs = append(*errs, fmt.Sprintf("%s: have %d values, want %d", name, len(v), n))
		return make([]float32, n)
	}
	return v
}

// layer is one transformer layer: pre-norm self-attention and a pre-norm
// ReLU feed-forward block, each with a residual connection.
type layer struct {
	in, width, heads  int
	lnScale, lnBias   []float32 // in
	qkv, qkvBias      []float32 // in x 3*in, 3*in
	out, outBias      []float32 // in x width, width
	res, resBias      []float32 // in x width when in != width: residual projection
	ffnScale, ffnBias []float32 // width
	conv1, conv1Bias  []float32 // width x ffn, ffn
	conv2, conv2Bias  []float32 // ffn x width, width
	ffn               int
	attnScale         float32
}

// model is Universal Sentence Encoder lite: piece embeddings of 256 with a
// sinusoidal position signal, a 256-wide attention layer projected to 512,
// a 512-wide layer, mean pooling, a tanh dense layer and L2 normalisation.
type model struct {
	emb          []float32 // vocab x 256
	embDim       int
	invTimescale []float32 // 128
	layers       [2]layer
	tanhW, tanhB []float32 // 512 x 512, 512
}

// Dim is the output dimension.
const outDim = 512

func newModel(w weights) (*model, error) {
	var errs []string
	m := &model{embDim: 256}
	m.emb = w["Embeddings_en"]
	if len(m.emb)%m.embDim != 0 || len(m.emb) == 0 {
		errs = append(errs, "Embeddings_en: bad shape")
	}
	m.invTimescale = w.get("Encode/TransformerStack/Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1", 128, &errs)
	m.layers[0] = loadLayer(w, 0, 256, 512, &errs)
	m.layers[1] = loadLayer(w, 1, 512, 512, &errs)
	m.tanhW = w.get("hidden_layers/tanh_layer_0/weights", 512*512, &errs)
	m.tanhB = w.get("hidden_layers/tanh_layer_0/bias", 512, &errs)
	if len(errs) > 0 {
		return nil, fmt.Errorf("cannot build the model: %s", strings.Join(errs, "; "))
	}
	return m, nil
}

func loadLayer(w weights, i, in, width int, errs *[]string) layer {
	const ffn = 1536
	p := fmt.Sprintf("Encode/Layer_%d/TransformerLayer/", i)
	s := fmt.Sprintf("Encode/TransformerStack/Layer_%d/TransformerLayer/", i)
	l := layer{in: in, width: width, heads: 4, ffn: ffn}
	l.attnScale = float32(1 / math.Sqrt(float64(in/l.heads)))
	l.lnScale = w.get(p+"layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", in, errs)
	l.lnBias = w.get(p+"layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", in, errs)
	l.qkv = w.get(p+"MultiheadAttention/qkv_transform_single/kernel/part_0", in*3*in, errs)
	l.qkvBias = w.get(p+"MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", 3*in, errs)
	l.out = w.get(p+"MultiheadAttention/output_transform_single/kernel/part_0", in*width, errs)
	l.outBias = w.get(p+"MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat", width, errs)
	if in != width {
		l.res = w.get(p+"dense/kernel/ConcatPartitions/concat", in*width, errs)
		l.resBias = w.get(p+"dense/bias/ConcatPartitions/concat", width, errs)
	}
	l.ffnScale = w.get(p+"FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", width, errs)
	l.ffnBias = w.get(p+"FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", width, errs)
	l.conv1 = w.get(s+"FFN/conv1/Tensordot/Reshape_1", width*ffn, errs)
	l.conv1Bias = w.get(p+"FFN/conv1/bias/ConcatPartitions/concat", ffn, errs)
	l.conv2 = w.get(s+"FFN/conv2/Tensordot/Reshape_1", ffn*width, errs)
	l.conv2Bias = w.get(p+"FFN/conv2/bias/ConcatPartitions/concat", width, errs)
	return l
}
