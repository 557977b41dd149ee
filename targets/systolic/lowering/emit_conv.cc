// Convolutions on the matrix unit by strided implicit im2col (emit_conv.h).
#include "targets/systolic/lowering/emit_conv.h"

#include <algorithm>
#include <optional>

#include "targets/systolic/lowering/contraction_pipeline.h"
#include "targets/systolic/lowering/conv_shape.h"
#include "targets/systolic/lowering/emit_matmul.h"
#include "targets/systolic/lowering/emit_vector.h"
#include "targets/systolic/lowering/mxu_steps.h"
#include "targets/systolic/lowering/scratchpad.h"
#include "targets/systolic/lowering/tiling.h"

namespace systolic::lowering {

std::optional<PaddedActivation> ResidentConvInput(const hlo::Instruction& conv,
                                                  const ArchConfig& config) {
  if (conv.opcode() != hlo::Opcode::kConvolution) return std::nullopt;
  std::optional<ConvShape> shape = CanonicalConv(conv, config, nullptr);
  if (!shape || IsPlainMatmul(*shape)) return std::nullopt;
  return InputLayout(*shape);
}

int64_t ConvZeroBytes(const hlo::Instruction& conv) {
  const hlo::Shape& in = conv.operand(0)->shape();
  if (in.rank() != 4) return 0;
  const auto& window = conv.attr<hlo::ConvolutionAttrs>().window;
  int64_t pad_w = 0, pad_h = 0;
  for (const auto& w : window.dims) pad_w = std::max({pad_w, w.pad_lo, w.pad_hi});
  pad_h = pad_w;
  const int64_t b = hlo::ByteSize(in.type);
  const int64_t wp = in.dims[2] + 2 * pad_w;
  // The widest pad rows (pad_h rows of the padded width) or pad columns (every band row).
  return std::max(pad_h * wp, (in.dims[1] + 2 * pad_h) * pad_w) * in.dims[3] * b;
}

bool EmitConvFusion(ProgramBuilder& builder, const RowProgram& program, const ArchConfig& config,
                    const std::vector<uint64_t>& params, int64_t input, int64_t kernel,
                    uint64_t result, uint64_t zeros, std::string* why,
                    const LocalOperands& local) {
  std::optional<ConvShape> shape = CanonicalConv(*program.contraction, config, why);
  if (!shape) return false;
  if (program.has_reduce || program.values[static_cast<size_t>(program.root)].cls != RowClass::kFull) {
    if (why) *why = "convolution epilogue with a reduction or a reshaped result";
    return false;
  }
  const ConvShape& s = *shape;
  // A plain matmul: one long mxu.matmul per tile instead of one per output row.
  if (IsPlainMatmul(s)) {
    if (local.lhs || local.result) {
      if (why) *why = "on-chip operands of a 1x1 convolution";
      return false;
    }
    MatmulShape matmul{1, s.batch * s.h * s.w, s.cin, s.cout, s.input};
    return EmitMatmulTiles(builder, program, matmul, config, params, input, kernel, result, why);
  }
  const int64_t b = DtypeBytes(s.input);
  const int64_t wp = s.w + s.pw_lo + s.pw_hi;
  const int64_t pixel = s.cin * b;
  const int64_t tn = std::min(s.cout, config.array_cols);
  // On-chip input and result (segment_builder.h) are in the padded layouts they promise.
  const bool resident_input = local.lhs.has_value();
  if (resident_input && local.lhs_padded != InputLayout(s)) {
    if (why) *why = "on-chip convolution input in another layout";
    return false;
  }
  const RowValue& root = program.values[static_cast<size_t>(program.root)];
  const std::optional<PaddedActivation>& out_layout = local.result_padded;
  if (local.result &&
      (!out_layout || tn != s.cout || out_layout->batch != s.batch || out_layout->h != s.oh ||
       out_layout->w != s.ow || out_layout->channels != s.cout ||
       out_layout->element_bytes != DtypeBytes(root.dtype))) {
    if (why) *why = "on-chip convolution result in another layout";
    return false;
  }
  const int64_t hp = s.h + s.ph_lo + s.ph_hi;
  // One weight tile covers up to array.rows of a contraction that is contiguous in both
  // operands. For s8 that is a whole kernel row: its kw taps read kw adjacent input pixels of
  // an output pixel (contiguous in the HWC tile) and kernel rows (j, c) are contiguous in HWIO,
  // so shallow layers fill the array's rows (64 channels x 3 taps = 192) with a third of the
  // matmuls. Integer sums are exact in any grouping; float convolutions keep one tap per
  // group, so their rounding is unchanged.
  const bool row_taps = s.input == Dtype::kS8;
  const int64_t group_k = row_taps ? s.kw * s.cin : s.cin;  // contiguous contraction
  const int64_t tk = std::min(group_k, config.array_rows);
  const int64_t taps = s.kh * s.kw;
  if (s.ow > (int64_t{1} << 19)) {  // mxu.matmul's m field
    if (why) *why = "convolution rows too wide";
    return false;
  }

  // Stride 1 (ws): "wide rows" — one matmul per tap streams the whole band as if the output
  // were wp wide, reading the input tile straight through; the wp - ow columns past each row's
  // end are garbage the vector unit drops when it packs the rows (one vmov per output row).
  const bool wide = s.sh == 1 && s.sw == 1 && config.dataflow == Dataflow::kWs;
  const Dtype accumulator = s.input == Dtype::kS8 ? Dtype::kS32 : Dtype::kF32;

  // The tallest band of output rows whose input rows, kernel panel and epilogue fit twice.
  int64_t band = s.oh;
  int64_t in_bytes = 0, w_bytes = 0, set_bytes = 0, acc_bytes = 0, packed_bytes = 0;
  std::optional<TileBuffers> epilogue;
  bool packed_in_acc = false;
  // os and is keep one operand in the array: a matmul's m (= ow here) must fit it.
  if (config.dataflow != Dataflow::kWs && s.ow > std::min(config.array_rows, config.array_cols)) {
    band = 0;
  }
  for (; band > 0; band /= 2) {
    const int64_t in_rows = (band - 1) * s.sh + s.kh;
    in_bytes = resident_input ? 0 : AlignUp(in_rows * wp * pixel, kLocalAlignment);
    w_bytes = AlignUp(taps * s.cin * tn * b, kLocalAlignment);
    epilogue = PlanTileBuffers(program, band * s.ow, tn, config.ub_bytes);
    if (!epilogue) continue;
    packed_bytes = wide ? AlignUp(band * s.ow * tn * 4, kLocalAlignment) : 0;
    // The packed rows stay in the accumulators (the UB's ports are the array's operand path)
    // when the epilogue writes its result to the UB. When the result is the packed rows
    // themselves (no epilogue) they stay in the UB set: the store reads them after the vector
    // unit has released the accumulator set to tile t + 2's matmuls.
    packed_in_acc = wide && epilogue->offset[static_cast<size_t>(program.root)] >= 0;
    set_bytes = in_bytes + w_bytes + epilogue->footprint + (packed_in_acc ? 0 : packed_bytes);
    acc_bytes = AlignUp(band * (wide ? wp : s.ow) * tn * 4, kLocalAlignment) +
                (packed_in_acc ? packed_bytes : 0);
    const bool fields_fit =  // matmul m and vmov count
        !wide || (band * wp < (int64_t{1} << 19) && s.ow * tn < (int64_t{1} << 19));
    if (fields_fit && 2 * set_bytes <= config.ub_bytes && 2 * acc_bytes <= config.acc_bytes) break;
  }
  if (band == 0) {
    if (why) *why = "no band of the convolution fits ub.bytes / acc.bytes twice";
    return false;
  }
  // Several whole images per band (wide rows only), each weight tile serving one matmul per
  // image. A weight buffer is held m + array.cols - 2 cycles from its first matmul's start and
  // reloading it takes array.rows more (docs/isa.md "Back to back"), so a tile streaming fewer
  // than ~2 x array.rows rows leaves the array waiting on weight turnover (CNN0: 397 rows per
  // 19 x 19 image; 453 cycles per tile instead of 397). Take the fewest images whose rows
  // cover that. Their accumulator rows are consecutive (image g's wide rows at g * stream);
  // the pack then compacts them in place (a vmov reads its source in full before writing,
  // and row r's packed position never passes row r + 1's wide one), so the packed rows need
  // no space of their own.
  int64_t images = 1;
  const int64_t stream = (s.oh - 1) * wp + s.ow;  // one image's wide rows (a matmul's m)
  if (wide && band == s.oh) {
    int64_t want = 1;
    while (want < s.batch && want * stream < 2 * config.array_rows) ++want;
    for (; want > 1; --want) {
      const int64_t in =
          resident_input ? 0 : AlignUp(((want - 1) * hp + s.oh - 1 + s.kh) * wp * pixel,
                                       kLocalAlignment);
      std::optional<TileBuffers> e =
          PlanTileBuffers(program, want * s.oh * s.ow, tn, config.ub_bytes);
      if (!e) continue;
      const int64_t packed = AlignUp(want * s.oh * s.ow * tn * 4, kLocalAlignment);
      const bool in_acc = e->offset[static_cast<size_t>(program.root)] >= 0;
      const int64_t set = in + w_bytes + e->footprint + (in_acc ? 0 : packed);
      const int64_t acc = AlignUp(want * stream * tn * 4, kLocalAlignment);
      if (2 * set <= config.ub_bytes && 2 * acc <= config.acc_bytes) {
        images = want;
        in_bytes = in, epilogue = e, packed_bytes = packed, packed_in_acc = in_acc;
        set_bytes = set, acc_bytes = acc;
        break;
      }
    }
  }

  const bool vector_stage = program.has_vector_work() || wide || local.result.has_value();
  const int64_t bands = (s.oh + band - 1) / band;
  const int64_t n_tiles = (s.cout + tn - 1) / tn;
  const int64_t groups = (s.batch + images - 1) / images;  // of `images` images each
  const int64_t tiles = groups * bands * n_tiles;
  // Three UB sets let tile t - 2's epilogue run while tile t - 1 is on the array and tile t
  // loads (the interleaved order below); two sets keep the column-tile panel reuse.
  const int64_t ub_sets =
      vector_stage && n_tiles == 1 && 3 * set_bytes <= config.ub_bytes ? 3 : 2;
  ContractionPipeline pipeline(builder, vector_stage, tiles, ub_sets);
  // Where tile t lives: UB set t % ub_sets, accumulator set t%2.
  struct Placement {
    int64_t batch, images, oh0, n0, rows_out, cols;
    uint64_t in_local, w_local, epilogue_local, packed_local, acc, result_tile;
    Tile tile;
  };
  auto place = [&](int64_t t) {
    Placement p;
    p.batch = t / (bands * n_tiles) * images;
    p.images = std::min(images, s.batch - p.batch);
    p.oh0 = (t / n_tiles) % bands * band;
    p.n0 = t % n_tiles * tn;
    p.rows_out = std::min(band, s.oh - p.oh0);
    p.cols = std::min(tn, s.cout - p.n0);
    const uint64_t set = static_cast<uint64_t>((t % ub_sets) * set_bytes);
    // A resident input holds every image's padded rows: the band starts at padded row oh0 * sh.
    const int64_t first_padded_row = p.batch * hp + p.oh0 * s.sh;
    p.in_local = resident_input
                     ? *local.lhs + static_cast<uint64_t>(first_padded_row * wp * pixel)
                     : set;
    // With one column tile every band uses the same kernel panel: set 0's copy serves both.
    p.w_local = (n_tiles == 1 ? 0 : set) + static_cast<uint64_t>(in_bytes);
    p.epilogue_local = set + static_cast<uint64_t>(in_bytes + w_bytes);
    p.acc = kAccumulatorBit + static_cast<uint64_t>((t % 2) * acc_bytes);
    p.packed_local = packed_in_acc
                         ? (images > 1 ? p.acc  // packed in place
                                       : p.acc + static_cast<uint64_t>(acc_bytes - packed_bytes))
                         : p.epilogue_local + static_cast<uint64_t>(epilogue->footprint);
    p.result_tile = wide ? p.packed_local : p.acc;  // where the epilogue finds it
    p.tile = Tile{(p.batch * s.oh + p.oh0) * s.ow, p.images * p.rows_out * s.ow, p.n0, p.cols};
    return p;
  };

  // Load unit: the kernel panel, then the input rows (zeros where the window hangs over the
  // edge). Kernel first: when the input is the previous op's result, the load unit waits for
  // that op only at the input (lowering.cc), so the kernel streams while it drains.
  auto emit_loads = [&](int64_t t) {
    const Placement p = place(t);
    pipeline.BeginLoads(t);
    // The panel is loaded once: with one column tile all tiles share set 0's copy; with two,
    // set t%2 still holds tile t - 2's, the same column tile (n innermost).
    const bool panel_resident = n_tiles == 1 ? t >= 1 : (n_tiles == 2 && ub_sets == 2 && t >= 2);
    if (!panel_resident) {
      builder.Load(params[static_cast<size_t>(kernel)] + static_cast<uint64_t>(p.n0 * b),
                   s.cout * b, p.w_local, p.cols * b, p.cols * b, taps * s.cin);
    }
    const int64_t in_rows = (p.rows_out - 1) * s.sh + s.kh;
    for (int64_t g = 0; !resident_input && g < p.images; ++g) {  // image g at padded row g*hp
      LoadInputBand(builder, s, params[static_cast<size_t>(input)], zeros, p.batch + g,
                    p.oh0 * s.sh - s.ph_lo, in_rows,
                    p.in_local + static_cast<uint64_t>(g * hp * wp * pixel));
    }
    EmitTileLoads(builder, program, *epilogue, p.epilogue_local, p.tile, params);
    pipeline.EndLoads();
  };

  // Vector unit (into `v`, a RegistersOnly() fork, no tokens): garbage columns, epilogue, and
  // the copy of the result into its on-chip layout.
  auto emit_vector_body = [&](int64_t t, ProgramBuilder& v) {
    const Placement p = place(t);
    for (int64_t r = 0; wide && r < p.images * p.rows_out; ++r) {  // drop the garbage columns
      const int64_t streamed = r / p.rows_out * stream + r % p.rows_out * wp;  // wide row
      Instruction pack = MakeInstruction(Opcode::kVMov);
      pack.set(VMovField::dst, p.packed_local + static_cast<uint64_t>(r * s.ow * p.cols * 4));
      pack.set(VMovField::src, p.acc + static_cast<uint64_t>(streamed * p.cols * 4));
      pack.set(VMovField::count, static_cast<uint64_t>(s.ow * p.cols));
      pack.set(VMovField::dtype, static_cast<uint64_t>(accumulator));
      v.Append(pack);
    }
    EmitTileCompute(v, program, *epilogue, p.epilogue_local, p.tile, p.result_tile);
    // Output row r into the interior of padded row top + oh0 + r, image by image: only the
    // root is read, so shifting both bases by g images' packed rows addresses image g's rows.
    for (int64_t g = 0; local.result && g < p.images; ++g) {
      const PaddedActivation& o = *out_layout;
      const int64_t first_row =
          ((p.batch + g) * o.padded_h() + o.top + p.oh0) * o.padded_w() + o.left;
      const uint64_t shift =
          static_cast<uint64_t>(g * p.rows_out * s.ow * p.cols * DtypeBytes(root.dtype));
      Tile image = p.tile;
      image.row0 += g * p.rows_out * s.ow;
      image.rows = p.rows_out * s.ow;
      EmitTileCopyPiecesToLocal(v, program, *epilogue, p.epilogue_local + shift, image,
                                p.result_tile + shift, s.ow * p.cols,
                                *local.result + static_cast<uint64_t>(first_row * o.pixel_bytes()),
                                o.padded_w() * o.pixel_bytes());
    }
  };
  auto emit_store = [&](int64_t t) {
    const Placement p = place(t);
    pipeline.BeginStore();
    EmitTileStore(builder, program, *epilogue, p.epilogue_local, p.tile, result, p.result_tile);
    pipeline.EndStore(t);
  };

  // Matrix unit: per tap and channel block, one weight tile and one matmul per output row.
  // `other` (spliced a share after each step) is tile `other_tile`'s vector work, or empty.
  int weight_buffer = 0;
  auto emit_mxu = [&](int64_t t, const std::vector<Instruction>& other) {
    const Placement p = place(t);
    pipeline.BeginMxu(t);
    bool accumulate = false;
    std::vector<MxuStep> steps;
    for (int64_t group = 0; group < (row_taps ? s.kh : taps); ++group) {
      // Kernel row i; with one tap per group, tap (i, j). `first` indexes (j, c) within it.
      const int64_t i = row_taps ? group : group / s.kw;
      const int64_t first = row_taps ? 0 : group % s.kw * s.cin;
      for (int64_t c0 = 0; c0 < group_k; c0 += tk) {
        const int64_t depth = std::min(tk, group_k - c0), k0 = first + c0;
        MxuStep step;
        step.ldw = MakeInstruction(Opcode::kMxuLoadWeights);
        step.ldw.set(MxuLoadWeightsField::src,
                     p.w_local + static_cast<uint64_t>((i * s.kw * s.cin + k0) * p.cols * b));
        step.ldw.set(MxuLoadWeightsField::k, static_cast<uint64_t>(depth));
        step.ldw.set(MxuLoadWeightsField::n, static_cast<uint64_t>(p.cols));
        step.ldw.set(MxuLoadWeightsField::dtype, static_cast<uint64_t>(s.input));
        step.ldw.set(MxuLoadWeightsField::buf, static_cast<uint64_t>(weight_buffer));
        step.matmul_src_row_stride = s.sw * pixel;
        // Wide rows: one matmul per image g (its input at padded row g * hp, its sums at wide
        // row g * stream); else one per output row r.
        for (int64_t r = 0; r < (wide ? p.images : p.rows_out); ++r) {
          const int64_t in_row = wide ? r * hp + i : r * s.sh + i;
          const int64_t acc_row = wide ? r * stream : r * s.ow;
          Instruction mm = MakeInstruction(Opcode::kMxuMatmul);
          mm.set(MxuMatmulField::src,  // tap j, channel c of pixel (r, 0) at (j * cin + c) * b
                 p.in_local + static_cast<uint64_t>(in_row * wp * pixel + k0 * b));
          mm.set(MxuMatmulField::dst, p.acc + static_cast<uint64_t>(acc_row * p.cols * 4));
          mm.set(MxuMatmulField::m,
                 static_cast<uint64_t>(wide ? (p.rows_out - 1) * wp + s.ow : s.ow));
          mm.set(MxuMatmulField::dtype, static_cast<uint64_t>(s.input));
          mm.set(MxuMatmulField::buf, static_cast<uint64_t>(weight_buffer));
          mm.set(MxuMatmulField::acc, accumulate ? 1 : 0);
          mm.set(MxuMatmulField::dataflow, static_cast<uint64_t>(config.dataflow));
          step.matmuls.push_back(mm);
        }
        steps.push_back(std::move(step));
        accumulate = true;
        weight_buffer ^= 1;
      }
    }
    // An even share of `other` after each step, the rest after the last.
    size_t spliced = 0;
    auto after_step = [&](size_t i) {
      const size_t upto = other.size() * (i + 1) / steps.size();
      for (; spliced < upto; ++spliced) builder.Splice(other[spliced]);
    };
    EmitMxuSteps(builder, steps, after_step);
    for (; spliced < other.size(); ++spliced) builder.Splice(other[spliced]);
    pipeline.EndMxu();
  };
  auto vector_body = [&](int64_t t) {
    ProgramBuilder v = builder.RegistersOnly();
    emit_vector_body(t, v);
    return v.program().instructions;
  };

  if (ub_sets == 2) {
    // Tile t's loads come before tile t - 1's compute in program order: the front end
    // dispatches in order into 16-deep unit queues, so the next band's loads are queued while
    // the matrix unit still works through this one (each unit's own order, hence the tokens,
    // is unchanged).
    for (int64_t t = 0; t <= tiles; ++t) {
      if (t < tiles) emit_loads(t);
      if (t < 1) continue;
      emit_mxu(t - 1, {});
      if (vector_stage) {
        pipeline.BeginVector();
        for (const Instruction& i : vector_body(t - 1)) builder.Splice(i);
        pipeline.EndVector(t - 1);
      }
      emit_store(t - 1);
    }
    return true;
  }
  // Three UB sets: tile t - 2's epilogue is interleaved with tile t - 1's matrix-unit steps.
  // Emitted one after the other, the epilogue's dozens of vector instructions (a vmov per
  // output row) filled the vector queue while they waited for their matmuls, so the front end
  // could not dispatch the next tile's matmuls until the epilogue had nearly run: the array
  // idled for most of an epilogue per tile. Every wait still follows its signal in program
  // order: loads t after store t - 3, matmuls t - 1 after drain t - 3, vector t - 2 after
  // matmuls t - 2.
  for (int64_t t = 0; t <= tiles + 1; ++t) {
    if (t < tiles) emit_loads(t);
    const bool vector = t >= 2;
    std::vector<Instruction> other;
    if (vector) {
      pipeline.BeginVector();
      other = vector_body(t - 2);
    }
    if (t >= 1 && t - 1 < tiles) {
      emit_mxu(t - 1, other);
    } else {
      for (const Instruction& i : other) builder.Splice(i);
    }
    if (vector) {
      pipeline.EndVector(t - 2);
      emit_store(t - 2);
    }
  }
  return true;
}

}  // namespace systolic::lowering
