// Convolutions on the matrix unit by strided implicit im2col (emit_conv.h).
#include "targets/systolic/lowering/emit_conv.h"

#include <algorithm>
#include <optional>

#include "targets/systolic/lowering/contraction_pipeline.h"
#include "targets/systolic/lowering/emit_matmul.h"
#include "targets/systolic/lowering/emit_vector.h"
#include "targets/systolic/lowering/scratchpad.h"
#include "targets/systolic/lowering/tiling.h"

namespace systolic::lowering {
namespace {

struct ConvShape {
  int64_t batch, h, w, cin, kh, kw, cout, sh, sw, ph_lo, ph_hi, pw_lo, pw_hi, oh, ow;
  Dtype input;
};

std::optional<ConvShape> CanonicalConv(const hlo::Instruction& conv, const ArchConfig& config,
                                       std::string* why) {
  auto fail = [&](const std::string& reason) -> std::optional<ConvShape> {
    if (why) *why = reason;
    return std::nullopt;
  };
  const auto& attrs = conv.attr<hlo::ConvolutionAttrs>();
  const auto& d = attrs.dnums;
  const hlo::Shape& in = conv.operand(0)->shape();
  const hlo::Shape& k = conv.operand(1)->shape();
  bool nhwc = in.rank() == 4 && d.input_batch == 0 && d.input_spatial == std::vector<int64_t>{1, 2} &&
              d.input_feature == 3 && d.kernel_spatial == std::vector<int64_t>{0, 1} &&
              d.kernel_input_feature == 2 && d.kernel_output_feature == 3 &&
              d.output_batch == 0 && d.output_spatial == std::vector<int64_t>{1, 2} &&
              d.output_feature == 3;
  if (!nhwc) return fail("convolution not in b01f_01io->b01f form");
  if (attrs.feature_group_count != 1 || attrs.batch_group_count != 1) {
    return fail("grouped convolution");
  }
  for (const hlo::WindowDim& w : attrs.window.dims) {
    if (w.base_dilation != 1 || w.window_dilation != 1 || w.reversal || w.pad_lo < 0 ||
        w.pad_hi < 0 || w.stride < 1) {
      return fail("dilated, reversed or negatively padded convolution");
    }
  }
  if (!in.HasDefaultLayout() || !k.HasDefaultLayout() || !conv.shape().HasDefaultLayout()) {
    return fail("convolution with non-default layouts");
  }
  std::optional<Dtype> dtype = IsaDtype(in.type);
  uint32_t bit = dtype ? MxuBit(*dtype) : 0;
  if (bit == 0 || k.type != in.type) return fail("convolution element type");
  if ((config.mxu_dtypes & bit) == 0) {
    return fail("array.dtypes of this configuration lacks " + std::string(DtypeName(*dtype)));
  }
  hlo::PrimitiveType out = conv.shape().type;
  if (*dtype == Dtype::kS8 ? out != hlo::PrimitiveType::kS32
                           : (out != hlo::PrimitiveType::kF32 && out != in.type)) {
    return fail("convolution result type");
  }
  const auto& wh = attrs.window.dims[0];
  const auto& ww = attrs.window.dims[1];
  ConvShape s{in.dims[0], in.dims[1], in.dims[2], in.dims[3], k.dims[0], k.dims[1], k.dims[3],
              wh.stride, ww.stride, wh.pad_lo, wh.pad_hi, ww.pad_lo, ww.pad_hi,
              conv.shape().dims[1], conv.shape().dims[2], *dtype};
  if (s.batch <= 0 || s.oh <= 0 || s.ow <= 0 || s.cin <= 0 || s.cout <= 0) {
    return fail("empty convolution");
  }
  return s;
}

// Input rows [ih0, ih0 + rows) of image `batch` into `local` as rows of the padded width; rows
// and columns outside the image come from the zero region.
void LoadInputBand(ProgramBuilder& builder, const ConvShape& s, uint64_t input, uint64_t zeros,
                   int64_t batch, int64_t ih0, int64_t rows, uint64_t local) {
  const int64_t pixel = s.cin * DtypeBytes(s.input);
  const int64_t padded_row = (s.w + s.pw_lo + s.pw_hi) * pixel;
  const int64_t first = std::clamp<int64_t>(-ih0, 0, rows);          // top padding rows
  const int64_t last = std::clamp<int64_t>(s.h - ih0, first, rows);  // end of image rows
  if (first > 0) builder.Load(zeros, first * padded_row, local, padded_row, first * padded_row, 1);
  if (last > first) {
    builder.Load(input + static_cast<uint64_t>((batch * s.h + ih0 + first) * s.w * pixel),
                 s.w * pixel, local + static_cast<uint64_t>(first * padded_row + s.pw_lo * pixel),
                 padded_row, s.w * pixel, last - first);
  }
  if (rows > last) {
    builder.Load(zeros, (rows - last) * padded_row,
                 local + static_cast<uint64_t>(last * padded_row), padded_row,
                 (rows - last) * padded_row, 1);
  }
  if (s.pw_lo > 0) builder.Load(zeros, s.pw_lo * pixel, local, padded_row, s.pw_lo * pixel, rows);
  if (s.pw_hi > 0) {
    builder.Load(zeros, s.pw_hi * pixel, local + static_cast<uint64_t>((s.pw_lo + s.w) * pixel),
                 padded_row, s.pw_hi * pixel, rows);
  }
}

}  // namespace

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
                    uint64_t result, uint64_t zeros, std::string* why) {
  std::optional<ConvShape> shape = CanonicalConv(*program.contraction, config, why);
  if (!shape) return false;
  if (program.has_reduce || program.values[static_cast<size_t>(program.root)].cls != RowClass::kFull) {
    if (why) *why = "convolution epilogue with a reduction or a reshaped result";
    return false;
  }
  const ConvShape& s = *shape;
  // A 1x1, stride-1, unpadded convolution in NHWC is the matmul [B*H*W, cin] x [cin, cout]:
  // one long mxu.matmul per tile instead of one per output row.
  if (s.kh == 1 && s.kw == 1 && s.sh == 1 && s.sw == 1 && s.ph_lo == 0 && s.ph_hi == 0 &&
      s.pw_lo == 0 && s.pw_hi == 0) {
    MatmulShape matmul{1, s.batch * s.h * s.w, s.cin, s.cout, s.input};
    return EmitMatmulTiles(builder, program, matmul, config, params, input, kernel, result, why);
  }
  const int64_t b = DtypeBytes(s.input);
  const int64_t wp = s.w + s.pw_lo + s.pw_hi;
  const int64_t pixel = s.cin * b;
  const int64_t tn = std::min(s.cout, config.array_cols);
  const int64_t tk = std::min(s.cin, config.array_rows);
  const int64_t chunks = (s.cin + tk - 1) / tk;
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
  // os and is keep one operand in the array: a matmul's m (= ow here) must fit it.
  if (config.dataflow != Dataflow::kWs && s.ow > std::min(config.array_rows, config.array_cols)) {
    band = 0;
  }
  for (; band > 0; band /= 2) {
    const int64_t in_rows = (band - 1) * s.sh + s.kh;
    in_bytes = AlignUp(in_rows * wp * pixel, kLocalAlignment);
    w_bytes = AlignUp(taps * s.cin * tn * b, kLocalAlignment);
    epilogue = PlanTileBuffers(program, band * s.ow, tn, config.ub_bytes);
    if (!epilogue) continue;
    packed_bytes = wide ? AlignUp(band * s.ow * tn * 4, kLocalAlignment) : 0;
    set_bytes = in_bytes + w_bytes + epilogue->footprint + packed_bytes;
    acc_bytes = AlignUp(band * (wide ? wp : s.ow) * tn * 4, kLocalAlignment);
    const bool fields_fit =  // matmul m and vmov count
        !wide || (band * wp < (int64_t{1} << 19) && s.ow * tn < (int64_t{1} << 19));
    if (fields_fit && 2 * set_bytes <= config.ub_bytes && 2 * acc_bytes <= config.acc_bytes) break;
  }
  if (band == 0) {
    if (why) *why = "no band of the convolution fits ub.bytes / acc.bytes twice";
    return false;
  }

  const bool vector_stage = program.has_vector_work() || wide;
  const int64_t bands = (s.oh + band - 1) / band;
  const int64_t n_tiles = (s.cout + tn - 1) / tn;
  const int64_t tiles = s.batch * bands * n_tiles;
  ContractionPipeline pipeline(builder, vector_stage, tiles);
  int weight_buffer = 0;
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t batch = t / (bands * n_tiles);
    const int64_t oh0 = (t / n_tiles) % bands * band;
    const int64_t n0 = t % n_tiles * tn;
    const int64_t rows_out = std::min(band, s.oh - oh0);
    const int64_t cols = std::min(tn, s.cout - n0);
    const uint64_t set = static_cast<uint64_t>((t % 2) * set_bytes);
    const uint64_t in_local = set, w_local = set + static_cast<uint64_t>(in_bytes);
    const uint64_t epilogue_local = w_local + static_cast<uint64_t>(w_bytes);
    const uint64_t packed_local = epilogue_local + static_cast<uint64_t>(epilogue->footprint);
    const uint64_t acc = kAccumulatorBit + static_cast<uint64_t>((t % 2) * acc_bytes);
    const uint64_t result_tile = wide ? packed_local : acc;  // where the epilogue finds it

    // Load unit: input rows (zeros where the window hangs over the edge), then the kernel panel.
    pipeline.BeginLoads(t);
    const int64_t in_rows = (rows_out - 1) * s.sh + s.kh;
    LoadInputBand(builder, s, params[static_cast<size_t>(input)], zeros, batch,
                  oh0 * s.sh - s.ph_lo, in_rows, in_local);
    builder.Load(params[static_cast<size_t>(kernel)] + static_cast<uint64_t>(n0 * b), s.cout * b,
                 w_local, cols * b, cols * b, taps * s.cin);
    Tile tile{(batch * s.oh + oh0) * s.ow, rows_out * s.ow, n0, cols};
    EmitTileLoads(builder, program, *epilogue, epilogue_local, tile, params);
    pipeline.EndLoads();

    // Matrix unit: per tap and channel block, one weight tile and one matmul per output row.
    pipeline.BeginMxu(t);
    bool accumulate = false;
    for (int64_t tap = 0; tap < taps; ++tap) {
      const int64_t i = tap / s.kw, j = tap % s.kw;
      for (int64_t chunk = 0; chunk < chunks; ++chunk) {
        const int64_t c0 = chunk * tk, depth = std::min(tk, s.cin - c0);
        builder.SetRegister(ConfigRegister::kMxuSrcRowStride, 0);
        Instruction ldw = MakeInstruction(Opcode::kMxuLoadWeights);
        ldw.set(MxuLoadWeightsField::src,
                w_local + static_cast<uint64_t>((tap * s.cin + c0) * cols * b));
        ldw.set(MxuLoadWeightsField::k, static_cast<uint64_t>(depth));
        ldw.set(MxuLoadWeightsField::n, static_cast<uint64_t>(cols));
        ldw.set(MxuLoadWeightsField::dtype, static_cast<uint64_t>(s.input));
        ldw.set(MxuLoadWeightsField::buf, static_cast<uint64_t>(weight_buffer));
        builder.Append(ldw);
        builder.SetRegister(ConfigRegister::kMxuSrcRowStride, s.sw * pixel);
        for (int64_t r = 0; r < (wide ? 1 : rows_out); ++r) {
          Instruction mm = MakeInstruction(Opcode::kMxuMatmul);
          mm.set(MxuMatmulField::src,
                 in_local + static_cast<uint64_t>(((r * s.sh + i) * wp + j) * pixel + c0 * b));
          mm.set(MxuMatmulField::dst, acc + static_cast<uint64_t>(r * s.ow * cols * 4));
          mm.set(MxuMatmulField::m,
                 static_cast<uint64_t>(wide ? (rows_out - 1) * wp + s.ow : s.ow));
          mm.set(MxuMatmulField::dtype, static_cast<uint64_t>(s.input));
          mm.set(MxuMatmulField::buf, static_cast<uint64_t>(weight_buffer));
          mm.set(MxuMatmulField::acc, accumulate ? 1 : 0);
          mm.set(MxuMatmulField::dataflow, static_cast<uint64_t>(config.dataflow));
          builder.Append(mm);
        }
        accumulate = true;
        weight_buffer ^= 1;
      }
    }
    pipeline.EndMxu();

    if (vector_stage) {
      pipeline.BeginVector();
      for (int64_t r = 0; wide && r < rows_out; ++r) {  // drop the garbage columns
        Instruction pack = MakeInstruction(Opcode::kVMov);
        pack.set(VMovField::dst, packed_local + static_cast<uint64_t>(r * s.ow * cols * 4));
        pack.set(VMovField::src, acc + static_cast<uint64_t>(r * wp * cols * 4));
        pack.set(VMovField::count, static_cast<uint64_t>(s.ow * cols));
        pack.set(VMovField::dtype, static_cast<uint64_t>(accumulator));
        builder.Append(pack);
      }
      EmitTileCompute(builder, program, *epilogue, epilogue_local, tile, result_tile);
      pipeline.EndVector(t);
    }
    pipeline.BeginStore();
    EmitTileStore(builder, program, *epilogue, epilogue_local, tile, result, result_tile);
    pipeline.EndStore(t);
  }
  return true;
}

}  // namespace systolic::lowering
