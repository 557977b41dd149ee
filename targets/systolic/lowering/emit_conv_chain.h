// A chain of int8 convolution layers lowered as one op that keeps every activation on chip and
// pipelines the layers image by image — how TPU v1 runs a convolutional network near its peak.
//
// A chain is L >= 2 layers, each a stride-1 convolution whose epilogue is the requantize idiom
// (one vrequant, with the fused ReLU when it clamps at 0), whose result's only user is the next
// layer's input, all with the same padded input layout and one column tile (cout <= array.cols),
// and whose whole batch of wide rows fits the accumulators at once. Per layer k:
//
//   load:   kernel k into kernel buffer k % 2 once layer k - 2's weight loads are done (a
//           vector -> load token from layer k - 2's epilogue); layer 0's images (with their
//           zero padding) and the other region's zero halo once, at the start
//   mxu:    per weight tile (kernel row taps x channel block): one mxu.ldw, one step ahead as in
//           mxu_steps.h, then one wide-row mxu.matmul per image into its own accumulator slot,
//           so each weight tile streams batch x (oh - 1) x wp + ow rows (CNN0: 8 x 397); the
//           first tile's matmul of image g waits for image g of the input (load or epilogue)
//   vector: after the layer's last matmul, per image: one vrequant per output row from the
//           image's accumulator slot straight into the interior of the next region's padded
//           layout; a token per image lets the next layer's first matmul of that image start
//           while the other images drain
//   store:  the last layer's images from their region to DRAM, image by image.
// Activations alternate between two padded regions; the halos are zeroed once and never
// written. Image g's accumulator slot is reused by the next layer only after image g's
// epilogue read it (the same token that hands over its input).
//
// Guarantees: every output equals the layers' convolutions (s32 sums in any order are exact)
// followed by their requantize epilogues; the program's tokens are balanced and every wait
// follows its signal in program order. False with the reason (nothing usable emitted) when any
// condition above fails — the caller then lowers the layers one by one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "targets/systolic/arch_config.h"
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
