// A chain of int8 convolution layers lowered as one op that keeps every activation on chip and
// pipelines the layers image by image — how TPU v1 runs a convolutional network near its peak.
//
// A chain is L >= 2 layers, each a stride-1 convolution whose epilogue is the requantize idiom
// (one vrequant, with the fused ReLU when it clamps at 0), whose result's only user is the next
// layer's input, each with one column tile (cout <= array.cols), and whose whole batch fits
// the accumulators at once (one slot per image). Layers may differ in shape and padding.
// Per layer k:
//
//   load:   kernel k into kernel buffer k % 2 once layer k - 2's weight loads are done (a
//           vector -> load token), in at most 12 chunks; layer 0's images (with their zero
//           padding) between its first tile's matmuls; layer 1's halo once
//   mxu:    per weight tile (a kernel row's taps, or one tap's channel block): one mxu.ldw
//           issued under the previous tile's matmuls, then one instruction per image into its
//           accumulator slot — an mxu.conv over the image's interior window when every tile
//           is whole taps (oh x ow rows, packed), else a wide-row mxu.matmul ((oh - 1) x wp +
//           ow rows); the first tile's instruction for image g waits for image g of the input;
//           the last tile signals each image (a retirement token: the array keeps streaming)
//   vector: per image, one vrequant per output row from its slot into the interior of the next
//           region's padded layout (re-zeroing the image first when the region held another
//           layout), then a token that lets the next layer's first tile take that image
//   store:  the last layer's images, unpadded, to DRAM image by image.
// Activations alternate between two UB regions; the halos are zeroed once and never written.
// Image g's accumulator slot is reused by the next layer only after image g's epilogue read it
// (the same token that hands over its input).
//
// Guarantees: every output equals the layers' convolutions (s32 sums in any order are exact)
// followed by their requantize epilogues; the program's tokens are balanced and every wait
// follows its signal in program order. False with the reason (nothing usable emitted) when any
// condition above fails — the caller then lowers the layers one by one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simulator/isa/arch_config.h"
#include "targets/systolic/lowering/program_builder.h"
#include "targets/systolic/lowering/row_program.h"

namespace systolic::lowering {

struct ConvChainLayer {
  const RowProgram* program = nullptr;  // the convolution and its epilogue
  std::vector<uint64_t> params;         // DRAM addresses of the program's external operands
  int64_t input = -1, kernel = -1;      // indices among them of the convolution's operands
};

// `result`: DRAM address of the last layer's output; `zeros`: a DRAM region that reads as
// zeros, of at least ConvZeroBytes(first convolution) bytes.
bool EmitConvChain(ProgramBuilder& builder, const std::vector<ConvChainLayer>& layers,
                   const ArchConfig& config, uint64_t result, uint64_t zeros, std::string* why);

}  // namespace systolic::lowering
