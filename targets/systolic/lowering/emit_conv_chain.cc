// EmitConvChain (emit_conv_chain.h): int8 convolution layers pipelined image by image on chip.
#include "targets/systolic/lowering/emit_conv_chain.h"

#include <algorithm>
#include <optional>

#include "targets/systolic/lowering/conv_shape.h"
#include "targets/systolic/lowering/emit_vector.h"
#include "targets/systolic/lowering/scratchpad.h"

namespace systolic::lowering {
namespace {

// The epilogue the chain runs on the way out of the accumulators: the requantize idiom and
// nothing else (row_program.cc folds a lower bound of 0 into vrequant's fused ReLU).
struct RequantEpilogue {
  Requantization quant;
  Dtype dtype = Dtype::kS8;
};

std::optional<RequantEpilogue> MatchRequantEpilogue(const RowProgram& program) {
  if (program.has_reduce || program.root < 0 || program.contraction_value < 0) return std::nullopt;
  const RowOp* requantize = nullptr;
  for (const RowOp& op : program.ops) {
    if (op.kind == RowOpKind::kMatmul) continue;
    if (op.kind != RowOpKind::kRequantize || requantize) return std::nullopt;
    requantize = &op;
  }
  if (!requantize || requantize->srcs != std::vector<int>{program.contraction_value} ||
      requantize->dst != program.root) {
    return std::nullopt;
  }
  const RowValue& root = program.values[static_cast<size_t>(program.root)];
  if (root.cls != RowClass::kFull) return std::nullopt;
  return RequantEpilogue{requantize->quant, root.dtype};
}

// The largest value `field` of `opcode` holds (isa.def).
int64_t FieldMax(Opcode opcode, size_t field) {
  return static_cast<int64_t>(GetInstrInfo(opcode).fields[field].max_value());
}

struct Layer {
  ConvShape shape;
  RequantEpilogue epilogue;
  uint64_t kernel = 0;  // DRAM
};

// One weight tile of a layer: kernel row i, contraction entries [k0, k0 + depth) of it.
struct WeightTile {
  int64_t row, k0, depth;
};

}  // namespace

bool EmitConvChain(ProgramBuilder& builder, const std::vector<ConvChainLayer>& chain,
                   const ArchConfig& config, uint64_t result, uint64_t zeros, std::string* why) {
  auto fail = [&](const std::string& reason) {
    if (why) *why = "convolution chain: " + reason;
    return false;
  };
  if (chain.size() < 2) return fail("fewer than two layers");
  if (config.dataflow != Dataflow::kWs) return fail("wide rows need the ws dataflow");
  std::vector<Layer> layers;
  for (const ConvChainLayer& link : chain) {
    std::string reason;
    std::optional<ConvShape> shape = CanonicalConv(*link.program->contraction, config, &reason);
    if (!shape) return fail(reason);
    std::optional<RequantEpilogue> epilogue = MatchRequantEpilogue(*link.program);
    if (!epilogue) return fail("an epilogue other than the requantize idiom");
    const ConvShape& s = *shape;
    if (s.input != Dtype::kS8 || epilogue->dtype != Dtype::kS8 || IsPlainMatmul(s) ||
        s.sh != 1 || s.sw != 1) {
      return fail("a layer that is not an s8 stride-1 convolution with an s8 result");
    }
    if (s.cout > config.array_cols) return fail("more output channels than array columns");
    layers.push_back({s, *epilogue, link.params.at(static_cast<size_t>(link.kernel))});
  }
  const auto layer_count = static_cast<int64_t>(layers.size());
  const int64_t batch = layers[0].shape.batch;
  // layout[k]: layer k's padded input; layout[L]: the last result, unpadded.
  std::vector<PaddedActivation> layout;
  for (const Layer& layer : layers) layout.push_back(InputLayout(layer.shape));
  const ConvShape& last = layers.back().shape;
  layout.push_back(PaddedActivation{batch, last.oh, last.ow, last.cout, 1, 0, 0, 0, 0});

  // Per layer: its weight tiles, how it streams an image through a weight tile, and the
  // accumulator slot an image needs. A weight tile takes a whole kernel row's taps where they
  // fit the array's rows (kw adjacent pixels are contiguous in the padded row, their weights
  // contiguous in HWIO); s8 sums are exact in any grouping. When every tile is whole taps of
  // all input channels, each is one mxu.conv (a 1 x taps window over the image's interior
  // rows, src_row_stride = the padded row): exactly oh x ow rows, packed. Otherwise a wide-row
  // mxu.matmul streams (oh - 1) x wp + ow rows and the wp - ow past each row are never read.
  const int64_t max_conv_width =
      std::min(FieldMax(Opcode::kMxuConv, static_cast<size_t>(MxuConvField::in_w)),
               FieldMax(Opcode::kMxuConv, static_cast<size_t>(MxuConvField::in_h)));
  const int64_t max_conv_taps = FieldMax(Opcode::kMxuConv, static_cast<size_t>(MxuConvField::kw));
  std::vector<int64_t> stream(layers.size()), acc_row_pixels(layers.size());
  std::vector<bool> conv_form(layers.size());
  std::vector<std::vector<WeightTile>> tiles(layers.size());
  int64_t slot = 0, region = 0, kernel_bytes = 0;
  for (size_t k = 0; k < layers.size(); ++k) {
    const ConvShape& s = layers[k].shape;
    const int64_t group_k = s.kw * s.cin;
    const int64_t tk = std::min(group_k, config.array_rows);
    bool whole_taps = true;
    for (int64_t i = 0; i < s.kh; ++i) {
      for (int64_t k0 = 0; k0 < group_k; k0 += tk) {
        const int64_t depth = std::min(tk, group_k - k0);
        tiles[k].push_back({i, k0, depth});
        const int64_t taps = depth / s.cin;
        whole_taps = whole_taps && k0 % s.cin == 0 && depth % s.cin == 0 &&
                     s.ow + taps - 1 <= max_conv_width && taps <= max_conv_taps;
      }
    }
    conv_form[k] = whole_taps && s.oh <= max_conv_width;
    acc_row_pixels[k] = conv_form[k] ? s.ow : layout[k].padded_w();
    stream[k] = (s.oh - 1) * acc_row_pixels[k] + s.ow;
    if (stream[k] >= (int64_t{1} << 19)) return fail("images too large for one matmul");
    slot = std::max(slot, AlignUp(stream[k] * s.cout * 4, kLocalAlignment));
    region = std::max(region, AlignUp(layout[k].bytes(), kLocalAlignment));
    kernel_bytes = std::max(kernel_bytes, AlignUp(s.kh * s.kw * s.cin * s.cout, kLocalAlignment));
  }
  region = std::max(region, AlignUp(layout.back().bytes(), kLocalAlignment));
  if (batch * slot > config.acc_bytes) {
    return fail("the batch's rows do not fit the accumulators at once");
  }
  if (2 * region + 2 * kernel_bytes > config.ub_bytes) return fail("regions do not fit the UB");
  // The mxu's load -> mxu tokens come in this order: kernel 0, the images, kernel 1, kernel
  // 2, ...; with one weight tile in layer 0, kernel 1's wait would come before the images'.
  if (tiles[0].size() < 2) return fail("a single weight tile in the first layer");

  const uint64_t region_at[2] = {0, static_cast<uint64_t>(region)};
  const uint64_t kernel_at[2] = {static_cast<uint64_t>(2 * region),
                                 static_cast<uint64_t>(2 * region + kernel_bytes)};
  // Layer k reads region k % 2 in layout[k] and writes region (k + 1) % 2 in layout[k + 1].
  auto image_at = [&](int64_t k, int64_t g) {
    const PaddedActivation& l = layout[static_cast<size_t>(k)];
    return region_at[k % 2] +
           static_cast<uint64_t>(g * l.padded_h() * l.padded_w() * l.pixel_bytes());
  };
  auto slot_at = [&](int64_t g) { return kAccumulatorBit + static_cast<uint64_t>(g * slot); };
  // The global step j: layer step_layer[j], tile step_tile[j] of it.
  std::vector<int64_t> step_layer, step_tile;
  for (int64_t k = 0; k < layer_count; ++k) {
    for (size_t t = 0; t < tiles[static_cast<size_t>(k)].size(); ++t) {
      step_layer.push_back(k);
      step_tile.push_back(static_cast<int64_t>(t));
    }
  }
  const auto steps = static_cast<int64_t>(step_layer.size());

  // Kernel k in chunks: a DMA takes the UB port for all its bytes when its data arrives, and a
  // chunk of 64 KiB (128 port cycles on tpu-v1) fits between the array's own port turns. At
  // most 12 chunks, so a kernel load never fills the 16-deep load queue: the front end would
  // stop there, behind a DRAM-paced queue, instead of dispatching the vector and matrix work
  // that follows it.
  auto load_kernel = [&](int64_t k) {
    const ConvShape& s = layers[static_cast<size_t>(k)].shape;
    if (k >= 2) builder.Wait(Unit::kVector, Unit::kLoad);  // layer k - 2's ldw are done
    const int64_t rows = s.kh * s.kw * s.cin;
    const int64_t chunk_bytes = std::max<int64_t>(64 << 10, (rows * s.cout + 11) / 12);
    const int64_t chunk_rows = std::max<int64_t>(1, chunk_bytes / s.cout);
    for (int64_t r = 0; r < rows; r += chunk_rows) {
      builder.Load(layers[static_cast<size_t>(k)].kernel + static_cast<uint64_t>(r * s.cout),
                   s.cout, kernel_at[k % 2] + static_cast<uint64_t>(r * s.cout), s.cout, s.cout,
                   std::min(chunk_rows, rows - r));
    }
    builder.Signal(Unit::kLoad, Unit::kMxu);
  };
  auto ldw = [&](int64_t j) {
    if (j >= steps) return;
    const int64_t k = step_layer[static_cast<size_t>(j)];
    const ConvShape& s = layers[static_cast<size_t>(k)].shape;
    const WeightTile& t =
        tiles[static_cast<size_t>(k)][static_cast<size_t>(step_tile[static_cast<size_t>(j)])];
    if (t.row == 0 && t.k0 == 0) builder.Wait(Unit::kLoad, Unit::kMxu);  // kernel k is loaded
    Instruction inst = MakeInstruction(Opcode::kMxuLoadWeights);
    inst.set(MxuLoadWeightsField::src,
             kernel_at[k % 2] + static_cast<uint64_t>((t.row * s.kw * s.cin + t.k0) * s.cout));
    inst.set(MxuLoadWeightsField::k, static_cast<uint64_t>(t.depth));
    inst.set(MxuLoadWeightsField::n, static_cast<uint64_t>(s.cout));
    inst.set(MxuLoadWeightsField::dtype, static_cast<uint64_t>(Dtype::kS8));
    inst.set(MxuLoadWeightsField::buf, static_cast<uint64_t>(j % 2));
    builder.SetRegister(ConfigRegister::kMxuSrcRowStride, 0);
    builder.Append(inst);
  };
  auto matmul = [&](int64_t j, int64_t g) {
    const int64_t k = step_layer[static_cast<size_t>(j)];
    const int64_t tile = step_tile[static_cast<size_t>(j)];
    const WeightTile& t = tiles[static_cast<size_t>(k)][static_cast<size_t>(tile)];
    if (tile == 0) {  // image g of layer k's input is in place (and its slot read out)
      builder.Wait(k == 0 ? Unit::kLoad : Unit::kVector, Unit::kMxu);
    }
    const PaddedActivation& in = layout[static_cast<size_t>(k)];
    if (conv_form[static_cast<size_t>(k)]) {
      // Taps t.k0 / cin .. of kernel row t.row over the interior: output pixel (r, c) reads
      // padded pixels (r + t.row, c + tap).
      const ConvShape& s = layers[static_cast<size_t>(k)].shape;
      const int64_t taps = t.depth / s.cin;
      Instruction inst = MakeInstruction(Opcode::kMxuConv);
      inst.set(MxuConvField::src,
               image_at(k, g) + static_cast<uint64_t>((t.row * in.padded_w() + t.k0 / s.cin) *
                                                      in.pixel_bytes()));
      inst.set(MxuConvField::dst, slot_at(g));
      inst.set(MxuConvField::in_h, static_cast<uint64_t>(s.oh));
      inst.set(MxuConvField::in_w, static_cast<uint64_t>(s.ow + taps - 1));
      inst.set(MxuConvField::kh, 1);
      inst.set(MxuConvField::kw, static_cast<uint64_t>(taps));
      inst.set(MxuConvField::stride, 1);
      inst.set(MxuConvField::dtype, static_cast<uint64_t>(Dtype::kS8));
      inst.set(MxuConvField::buf, static_cast<uint64_t>(j % 2));
      inst.set(MxuConvField::acc, tile > 0 ? 1 : 0);
      inst.set(MxuConvField::dataflow, static_cast<uint64_t>(config.dataflow));
      builder.SetRegister(ConfigRegister::kMxuSrcRowStride, in.padded_w() * in.pixel_bytes());
      builder.Append(inst);
      return;
    }
    Instruction inst = MakeInstruction(Opcode::kMxuMatmul);
    // Tap row t.row, entries from t.k0 on: pixel (t.row, t.k0 / cin) of the image's window.
    inst.set(MxuMatmulField::src,
             image_at(k, g) + static_cast<uint64_t>(t.row * in.padded_w() * in.pixel_bytes() + t.k0));
    inst.set(MxuMatmulField::dst, slot_at(g));
    inst.set(MxuMatmulField::m, static_cast<uint64_t>(stream[static_cast<size_t>(k)]));
    inst.set(MxuMatmulField::dtype, static_cast<uint64_t>(Dtype::kS8));
    inst.set(MxuMatmulField::buf, static_cast<uint64_t>(j % 2));
    inst.set(MxuMatmulField::acc, tile > 0 ? 1 : 0);
    inst.set(MxuMatmulField::dataflow, static_cast<uint64_t>(config.dataflow));
    builder.SetRegister(ConfigRegister::kMxuSrcRowStride, in.pixel_bytes());
    builder.Append(inst);
  };
  // Image g of layer k out of its accumulator slot into the interior of layout[k + 1]. When the
  // region last held another layout (layer k - 1's input), the image's old bytes are zeroed
  // first so the new halo reads as zero.
  auto epilogue = [&](int64_t k, int64_t g) {
    const ConvShape& s = layers[static_cast<size_t>(k)].shape;
    const RequantEpilogue& e = layers[static_cast<size_t>(k)].epilogue;
    const PaddedActivation& out = layout[static_cast<size_t>(k + 1)];
    const int64_t wp = acc_row_pixels[static_cast<size_t>(k)];  // between the slot's rows
    const bool halo = out.top + out.bottom + out.left + out.right > 0;
    if (k >= 1 && k + 1 < layer_count && halo && out != layout[static_cast<size_t>(k - 1)]) {
      EmitFill(builder, image_at(k + 1, g), out.padded_h() * out.padded_w() * out.pixel_bytes(),
               Dtype::kS8, 0);
    }
    for (int64_t r = 0; r < s.oh; ++r) {
      const uint64_t dst = image_at(k + 1, g) +
          static_cast<uint64_t>(((out.top + r) * out.padded_w() + out.left) * out.pixel_bytes());
      const uint64_t src = slot_at(g) + static_cast<uint64_t>(r * wp * s.cout * 4);
      EmitRequantize(builder, dst, src, s.ow * s.cout, Dtype::kS32, Dtype::kS8, e.quant);
    }
  };
  auto store = [&](int64_t g) {
    builder.Wait(Unit::kVector, Unit::kStore);
    const int64_t bytes = last.oh * last.ow * last.cout;
    builder.Store(image_at(layer_count, g), bytes, result + static_cast<uint64_t>(g * bytes),
                  bytes, bytes, 1);
  };

  // Kernel 0 first; the images come with the first tile's matmuls (so the front end reaches
  // the array's work before the DRAM-paced image loads fill the load queue), then layer 1's
  // halo and kernel 1. Load -> mxu tokens: kernel 0, the images, kernel 1, kernel 2, ...
  const ConvShape& first = layers[0].shape;
  load_kernel(0);
  auto load_image = [&](int64_t g) {
    LoadInputBand(builder, first, chain[0].params.at(static_cast<size_t>(chain[0].input)), zeros,
                  g, -first.ph_lo, layout[0].padded_h(), image_at(0, g));
    builder.Signal(Unit::kLoad, Unit::kMxu);
  };
  auto load_layer1 = [&] {
    if (layout[1].top + layout[1].bottom + layout[1].left + layout[1].right > 0) {
      ZeroPaddedHalo(builder, layout[1], region_at[1], zeros);
    }
    load_kernel(1);
  };

  // The matrix unit's stream over every layer. A weight load goes right after the first
  // matmul of the step before (its buffer is free by then: held m + n - 2 cycles from the
  // previous step's last matmul), so it runs under the step's other matmuls. A layer's last
  // tile signals each image as its matmul completes (the matrix unit's tokens retire without
  // stalling it), so image g's epilogue runs while the array still works on the later images;
  // the next layer's first tile takes image g right after that epilogue. Every wait follows
  // its signal in program order.
  ldw(0);
  for (int64_t j = 0; j < steps; ++j) {
    const int64_t k = step_layer[static_cast<size_t>(j)];
    const bool boundary = k > 0 && step_tile[static_cast<size_t>(j)] == 0;
    const bool last_tile = j + 1 == steps || step_layer[static_cast<size_t>(j + 1)] != k;
    for (int64_t g = 0; g < batch; ++g) {
      if (boundary) {  // image g of layer k - 1, out of the accumulators
        builder.Wait(Unit::kMxu, Unit::kVector);
        if (g == 0 && k + 1 < layer_count) {
          builder.Signal(Unit::kVector, Unit::kLoad);  // layer k - 1's weight loads are done
          load_kernel(k + 1);
        }
        epilogue(k - 1, g);
        builder.Signal(Unit::kVector, Unit::kMxu);
      }
      if (j == 0) load_image(g);
      matmul(j, g);
      if (g == 0) ldw(j + 1);
      if (last_tile) builder.Signal(Unit::kMxu, Unit::kVector);
    }
    if (j == 0) load_layer1();
  }
  // The last layer: out of the accumulators and to DRAM, image by image.
  for (int64_t g = 0; g < batch; ++g) {
    builder.Wait(Unit::kMxu, Unit::kVector);
    epilogue(layer_count - 1, g);
    builder.Signal(Unit::kVector, Unit::kStore);
    store(g);
  }
  return true;
}

}  // namespace systolic::lowering
