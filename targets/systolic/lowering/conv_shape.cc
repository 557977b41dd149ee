// The canonical convolution and its padded layouts (conv_shape.h).
#include "targets/systolic/lowering/conv_shape.h"

#include <algorithm>
#include <vector>

#include "targets/systolic/lowering/row_program.h"
#include "targets/systolic/lowering/row_op_table.h"

namespace systolic::lowering {

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

bool IsPlainMatmul(const ConvShape& s) {
  return s.kh == 1 && s.kw == 1 && s.sh == 1 && s.sw == 1 && s.ph_lo == 0 && s.ph_hi == 0 &&
         s.pw_lo == 0 && s.pw_hi == 0;
}

PaddedActivation InputLayout(const ConvShape& s) {
  return PaddedActivation{s.batch, s.h,     s.w,     s.cin,   DtypeBytes(s.input),
                          s.ph_lo, s.ph_hi, s.pw_lo, s.pw_hi};
}

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

// Per image: the top and bottom padding rows, then the left and right padding columns of
// every padded row, each one strided load from the zero region.
void ZeroPaddedHalo(ProgramBuilder& builder, const PaddedActivation& layout, uint64_t region,
                    uint64_t zeros) {
  const int64_t pixel = layout.pixel_bytes();
  const int64_t row = layout.padded_w() * pixel;
  const int64_t image = layout.padded_h() * row;
  for (int64_t b = 0; b < layout.batch; ++b) {
    const uint64_t base = region + static_cast<uint64_t>(b * image);
    if (layout.top > 0) builder.Load(zeros, layout.top * row, base, row, layout.top * row, 1);
    if (layout.bottom > 0) {
      builder.Load(zeros, layout.bottom * row,
                   base + static_cast<uint64_t>((layout.top + layout.h) * row), row,
                   layout.bottom * row, 1);
    }
    if (layout.left > 0) {
      builder.Load(zeros, layout.left * pixel, base, row, layout.left * pixel,
                   layout.padded_h());
    }
    if (layout.right > 0) {
      builder.Load(zeros, layout.right * pixel,
                   base + static_cast<uint64_t>((layout.left + layout.w) * pixel), row,
                   layout.right * pixel, layout.padded_h());
    }
  }
}

}  // namespace systolic::lowering
