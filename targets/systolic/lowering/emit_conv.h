// Emission of a 2-D convolution (NHWC input, HWIO kernel: the systolic pipeline's canonical
// b01f_01io->b01f), alone or as the core of an output fusion, on the matrix unit — without
// materializing im2col anywhere.
//
// For each band of output rows (all columns) and each column tile of output features:
//   load:   the kernel's (kh*kw*cin) x tn panel in one strided load (once per op with one or
//           two column tiles), then the input rows the band needs into UB, HWC with the padded
//           width; padding comes from an all-zero DRAM region (never written, so it reads as
//           zero) by the same DMA
//   mxu:    per kernel tap (i, j) and block of <= array.rows input channels: one mxu.ldw (one
//           step ahead, mxu_steps.h), then one mxu.matmul per output row whose activations are
//           read straight from the input tile with mxu.src_row_stride = stride * cin elements
//           (implicit im2col by strides)
//   vector: the epilogue (row_program.h) on the accumulator tile; store: the output rows.
// Stride-1 wide-row bands that are whole images take several images per tile when one image
// streams fewer rows than a weight tile's turnover (one matmul per image per weight tile).
// Double buffering, tokens and program order as in emit_matmul.h.
//
// Guarantees: exactly the convolution's sums (in tap-major, channel order) followed by the
// epilogue; false with the reason (nothing emitted) for other forms (dilation, groups,
// negative padding, non-canonical labels) or when no band fits the buffers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "simulator/isa/arch_config.h"
#include "targets/systolic/lowering/emit_matmul.h"
#include "targets/systolic/lowering/program_builder.h"
#include "targets/systolic/lowering/row_program.h"

namespace systolic::lowering {

// `zeros`: a DRAM region of at least ConvZeroBytes(conv) bytes that is never written.
// `local`: the input already on chip (lhs, lhs_padded) and/or a copy of the result to leave
// there (result, result_padded: written row by row into the interior, the halo untouched);
// a result copy needs cout <= array.cols (one column tile holds whole pixels).
bool EmitConvFusion(ProgramBuilder& builder, const RowProgram& program, const ArchConfig& config,
                    const std::vector<uint64_t>& params, int64_t input, int64_t kernel,
                    uint64_t result, uint64_t zeros, std::string* why,
                    const LocalOperands& local = {});

// The on-chip layout of `conv`'s input when the emitter above can read it there (a canonical
// convolution not lowered as a plain matmul), else nullopt.
std::optional<PaddedActivation> ResidentConvInput(const hlo::Instruction& conv,
                                                  const ArchConfig& config);

int64_t ConvZeroBytes(const hlo::Instruction& conv);

}  // namespace systolic::lowering
