// The canonical convolution of the systolic target, shared by the convolution emitters
// (emit_conv.h: one op; emit_conv_chain.h: a chain of layers kept on chip).
//
// CanonicalConv accepts what both emitters can lower: NHWC input, HWIO kernel, NHWC output
// (b01f_01io->b01f), no groups, no dilation or reversal, non-negative padding, default layouts,
// and an element type the configuration's array takes (s8 -> s32, bf16/f32 -> f32 or the input
// type). Anything else returns nullopt with the reason, so the caller can fall back.
//
// Padded layouts: an image is held as (top + h + bottom) x (left + w + right) pixels of cin
// elements, row-major, so a stride-1 matmul can read a kernel tap's window straight through
// ("wide rows", emit_conv.cc). LoadInputBand and ZeroPaddedHalo fill such layouts by DMA, the
// padding from a DRAM region that reads as zeros.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "hlo/ir.h"
#include "simulator/isa/arch_config.h"
#include "targets/systolic/lowering/emit_matmul.h"
#include "targets/systolic/lowering/program_builder.h"

namespace systolic::lowering {

struct ConvShape {
  int64_t batch, h, w, cin, kh, kw, cout, sh, sw, ph_lo, ph_hi, pw_lo, pw_hi, oh, ow;
  Dtype input;
};

std::optional<ConvShape> CanonicalConv(const hlo::Instruction& conv, const ArchConfig& config,
                                       std::string* why);

// A 1x1, stride-1, unpadded convolution in NHWC is the matmul [B*H*W, cin] x [cin, cout].
bool IsPlainMatmul(const ConvShape& s);

// The convolution's input in its padded layout.
PaddedActivation InputLayout(const ConvShape& s);

// Input rows [ih0, ih0 + rows) of image `batch` into `local` as rows of the padded width; rows
// and columns outside the image come from the zero region.
void LoadInputBand(ProgramBuilder& builder, const ConvShape& s, uint64_t input, uint64_t zeros,
                   int64_t batch, int64_t ih0, int64_t rows, uint64_t local);

// The halo of every image of `layout` at `region` (top and bottom rows, left and right columns)
// loaded from the zero region, which must hold one image's pad rows or pad columns
// (ConvZeroBytes of the consuming convolution).
void ZeroPaddedHalo(ProgramBuilder& builder, const PaddedActivation& layout, uint64_t region,
                    uint64_t zeros);

}  // namespace systolic::lowering
