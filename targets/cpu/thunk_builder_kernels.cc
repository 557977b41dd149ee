// Generated-kernel lowering of the CPU backend's ThunkBuilder: loop / input fusions and
// standalone elementwise-like ops (TryKernel: row kernels first, thunk_builder_rows.cc; else
// reductions feeding other elements materialized by kernels of their own), and kOutput fusions (TryOutputFusion: GEMM/Conv2D plus
// a generated epilogue, per block when it is elementwise over the contraction). See
// thunk_builder.h for what becomes what.
#include <algorithm>
#include <set>

#include "targets/cpu/gather_emitter.h"
#include "targets/cpu/kernel_emitter.h"
#include "targets/cpu/thunk_builder.h"
#include "targets/cpu/thunk_builder_internal.h"
#include "targets/cpu/window_emitter.h"

namespace cpu {

using builder_internal::ArrayLeaves;
using builder_internal::Describe;
using builder_internal::FindContraction;
using builder_internal::SameIteration;
using hlo::Instruction;
using hlo::Opcode;
using llvm_codegen::ElementalEmitter;
using llvm_codegen::ElementGenerator;

void ThunkBuilder::AddKernelThunk(const std::string& hlo_name, Scope& scope,
                                  const std::string& symbol, std::vector<int64_t> buffers,
                                  const hlo::Shape& iteration, int64_t work_per_element,
                                  bool loop_kernel) {
  // Thunk names are unique per kernel so per-kernel times stay apart.
  std::string name = hlo_name;
  if (kernel_names_.count(name)) name = symbol;
  kernel_names_.insert(name);
  const int64_t rows = loop_kernel ? LoopKernelRows(iteration) : OuterRows(iteration);
  const int64_t per_row =
      loop_kernel ? LoopKernelElementsPerRow(iteration) : ElementsPerRow(iteration);
  if (loop_kernel && LoopKernelSplitLevel(iteration) > 0)
    result_.counters["kernels.split-below-unit-dims"] += 1;
  auto thunk = std::make_unique<KernelThunk>(name, symbol, std::move(buffers), rows,
                                             per_row * work_per_element);
  result_.kernels.push_back(thunk.get());
  result_.counters["thunks.kernel"] += 1;
  scope.sequence.AddThunk(std::move(thunk));
}

bool ThunkBuilder::TryKernel(const Instruction& inst, Scope& scope, const ValueLayout& output) {
  std::vector<hlo::Shape> operand_shapes;
  std::vector<int64_t> operand_buffers;
  for (const Instruction* operand : inst.operands()) {
    const ValueLayout& value = scope[operand];
    if (!value.shape.IsArray()) return false;  // tuple operands: not a loop kernel
    operand_shapes.push_back(value.shape);
    operand_buffers.push_back(value.buffer);
  }
  std::vector<const ValueLayout*> output_leaves;
  CollectLeaves(output, output_leaves);
  std::vector<hlo::Shape> outputs = ArrayLeaves(inst.shape());
  for (const hlo::Shape& s : outputs)
    if (!s.IsArray()) return false;

  const bool fused = inst.opcode() == Opcode::kFusion;
  const hlo::Computation* computation = fused ? inst.called_computations().at(0) : nullptr;
  if (fused && TryRowKernel(inst, scope, output)) return true;
  if ((fused || inst.opcode() == Opcode::kReduce) && TryColumnReduction(inst, scope, output))
    return true;
  // Reductions inside a fusion whose values feed other elements (a softmax's max and sum, a
  // layer norm's mean and variance) are computed once each into a scratch buffer by their own
  // kernel, in definition order; left inside the element loop they would be recomputed for
  // every element of their consumers.
  std::vector<const Instruction*> materialized;
  if (fused) {
    for (const auto& member : computation->instructions())
      if (member->opcode() == Opcode::kReduce && member.get() != computation->root() &&
          member->shape().IsArray())
        materialized.push_back(member.get());
  }
  std::vector<int64_t> scratch;
  for (const Instruction* reduce : materialized)
    scratch.push_back(scope.Acquire(ArrayByteSize(reduce->shape()), scope.scratch_acquired));

  // Generators of `computation`'s members up to `last` (nullptr: all); parameters and the first
  // `available` materialized reductions read buffers.
  auto walk = [&](ElementalEmitter& emitter, const std::vector<ElementGenerator>& loads,
                  size_t available, const Instruction* last) {
    std::map<const Instruction*, ElementGenerator> generators;
    for (const auto& member : computation->instructions()) {
      const Instruction* m = member.get();
      auto found = std::find(materialized.begin(), materialized.end(), m);
      const size_t position = static_cast<size_t>(found - materialized.begin());
      if (m->opcode() == Opcode::kParameter) {
        generators[m] = loads.at(static_cast<size_t>(m->attr<hlo::ParameterAttrs>().number));
      } else if (found != materialized.end() && position < available) {
        generators[m] = loads.at(operand_shapes.size() + position);
      } else if (m->opcode() == Opcode::kTuple) {
        // Only a root tuple is expected: its elements are the outputs.
      } else {
        std::vector<ElementGenerator> operands;
        for (const Instruction* operand : m->operands()) {
          auto it = generators.find(operand);
          if (it == generators.end())
            throw hlo::Error("cpu backend: no element generator for " + Describe(*operand));
          operands.push_back(it->second);
        }
        generators[m] = emitter.MakeGenerator(*m, std::move(operands));
      }
      if (m == last) break;
    }
    return generators;
  };
  auto root_generators = [&](std::map<const Instruction*, ElementGenerator>& generators) {
    std::vector<ElementGenerator> all;
    const Instruction* root = computation->root();
    if (root->opcode() == Opcode::kTuple) {
      for (const Instruction* element : root->operands()) all.push_back(generators.at(element));
    } else {
      all.push_back(generators.at(root));
    }
    return all;
  };

  // Scratch kernels first, then the outputs (one nest when they iterate alike, else one each).
  struct Planned {
    std::string name;  // the thunk's (profile) name
    std::string symbol;
    std::vector<int64_t> buffers;
    hlo::Shape iteration;
    int64_t work_per_element = 1;
  };
  std::vector<Planned> planned;
  std::vector<std::string> started;  // every function created, finished or not
  try {
    for (size_t k = 0; k < materialized.size(); ++k) {
      const Instruction* reduce = materialized[k];
      LoopKernelSpec spec;
      spec.name = KernelSymbol(module_, inst.name() + "." + reduce->name());
      started.push_back(spec.name);
      spec.operands = operand_shapes;
      for (size_t j = 0; j < k; ++j) spec.operands.push_back(materialized[j]->shape());
      spec.outputs = {reduce->shape()};
      EmitLoopKernel(module_, spec, [&](ElementalEmitter& emitter,
                                        std::vector<ElementGenerator> loads) {
        auto generators = walk(emitter, loads, k, reduce);
        return std::vector<ElementGenerator>{generators.at(reduce)};
      });
      Planned p{inst.name() + "/" + reduce->name(), spec.name, operand_buffers, reduce->shape(), 1};
      for (size_t j = 0; j <= k; ++j) p.buffers.push_back(scratch[j]);
      const int64_t produced = std::max<int64_t>(reduce->shape().ElementCount(), 1);
      p.work_per_element = std::max<int64_t>(reduce->operand(0)->shape().ElementCount() / produced, 1);
      planned.push_back(std::move(p));
    }
    const Instruction* root = fused ? computation->root() : nullptr;
    if (root != nullptr && root->opcode() == Opcode::kConcatenate && outputs.size() == 1) {
      // A concatenate root: one kernel per operand writing its slice, instead of a kernel
      // that picks the operand for every element (a 64-way choice per element otherwise).
      const int64_t dim = root->attr<hlo::DimensionsAttrs>().dimensions.at(0);
      int64_t offset = 0;
      for (const Instruction* piece : root->operands()) {
        const int64_t extent = piece->shape().dims.at(static_cast<size_t>(dim));
        hlo::Shape iteration = piece->shape();
        iteration.minor_to_major = outputs[0].EffectiveMinorToMajor();
        iteration.has_layout = true;
        if (iteration.ElementCount() > 0) {
          LoopKernelSpec spec;
          spec.name = KernelSymbol(module_, inst.name() + "." + piece->name());
          started.push_back(spec.name);
          spec.operands = operand_shapes;
          for (const Instruction* reduce : materialized) spec.operands.push_back(reduce->shape());
          spec.outputs = {outputs[0]};
          spec.iteration = iteration;
          spec.offset_dim = dim;
          spec.offset = offset;
          EmitLoopKernel(module_, spec, [&](ElementalEmitter& emitter,
                                            std::vector<ElementGenerator> loads) {
            auto generators = walk(emitter, loads, materialized.size(), nullptr);
            return std::vector<ElementGenerator>{generators.at(piece)};
          });
          Planned p{inst.name() + "/" + piece->name(), spec.name, operand_buffers, iteration, 1};
          p.buffers.insert(p.buffers.end(), scratch.begin(), scratch.end());
          p.buffers.push_back(output_leaves[0]->buffer);
          planned.push_back(std::move(p));
        }
        offset += extent;
      }
      outputs.clear();  // written by the pieces
    }
    std::vector<std::vector<size_t>> groups;
    if (outputs.empty()) {
      // Nothing left (a concatenate root was split above).
    } else if (SameIteration(outputs)) {
      groups.emplace_back();
      for (size_t i = 0; i < outputs.size(); ++i) groups.back().push_back(i);
    } else {
      for (size_t i = 0; i < outputs.size(); ++i) groups.push_back({i});
    }
    for (const std::vector<size_t>& group : groups) {
      LoopKernelSpec spec;
      spec.name = KernelSymbol(module_, inst.name());
      started.push_back(spec.name);
      spec.operands = operand_shapes;
      for (const Instruction* reduce : materialized) spec.operands.push_back(reduce->shape());
      for (size_t i : group) spec.outputs.push_back(outputs[i]);
      EmitLoopKernel(module_, spec, [&](ElementalEmitter& emitter,
                                        std::vector<ElementGenerator> loads) {
        std::vector<ElementGenerator> all;
        if (fused) {
          auto generators = walk(emitter, loads, materialized.size(), nullptr);
          all = root_generators(generators);
        } else if (inst.opcode() == Opcode::kGather) {
          all.push_back(MakeGatherGenerator(emitter, inst, loads.at(0), loads.at(1)));
        } else if (inst.opcode() == Opcode::kDot) {
          all.push_back(emitter.MakeDotGenerator(inst, loads.at(0), loads.at(1)));
        } else if (inst.opcode() == Opcode::kReduceWindow) {
          all.push_back(MakeReduceWindowGenerator(emitter, inst, loads.at(0), loads.at(1)));
        } else {
          all.push_back(emitter.MakeGenerator(inst, std::move(loads)));
        }
        std::vector<ElementGenerator> chosen;
        for (size_t i : group) chosen.push_back(all.at(i));
        return chosen;
      });
      // A generated dot does its contraction's multiply-adds per element.
      int64_t work = 1;
      if (inst.opcode() == Opcode::kDot) {
        for (int64_t dim : inst.attr<hlo::DotAttrs>().dnums.lhs_contracting)
          work *= inst.operand(0)->shape().dims.at(static_cast<size_t>(dim));
      }
      Planned p{inst.name(), spec.name, operand_buffers, outputs[group[0]], work};
      p.buffers.insert(p.buffers.end(), scratch.begin(), scratch.end());
      for (size_t i : group) p.buffers.push_back(output_leaves[i]->buffer);
      planned.push_back(std::move(p));
    }
  } catch (const hlo::Error& error) {
    // Leave no half-emitted function behind; the instruction falls back.
    for (const std::string& symbol : started)
      if (llvm::Function* f = module_.getFunction(symbol)) f->eraseFromParent();
    Fallback(inst, scope, output, error.what());
    return true;
  }
  for (Planned& p : planned)
    AddKernelThunk(p.name, scope, p.symbol, std::move(p.buffers), p.iteration, p.work_per_element,
                   /*loop_kernel=*/true);
  return true;
}

// True when every value computed from `contraction` inside `fused` is elementwise over the
// contraction's elements viewed as a row-major matrix (all dims but the last) x (last dim):
// elementwise ops, and reshapes between row-major shapes with the same last dim (they keep
// every element at its row and column; mha_block's [12,128,128] -> [1,12,128,128]). Then output
// element (r, c) needs only C(r, c), and the epilogue can run per block.
static bool ElementwiseTail(const hlo::Computation& fused, const Instruction* contraction) {
  const hlo::Shape& c = contraction->shape();
  if (c.rank() == 0) return false;
  std::set<const Instruction*> tainted = {contraction};
  for (const auto& member : fused.instructions()) {
    const Instruction* m = member.get();
    if (m == contraction) continue;
    bool reads = false;
    for (const Instruction* operand : m->operands()) reads = reads || tainted.count(operand) > 0;
    if (!reads) continue;
    const hlo::Shape& shape = m->shape();
    if (!shape.IsArray() || shape.rank() == 0 || shape.ElementCount() != c.ElementCount() ||
        shape.dims.back() != c.dims.back())
      return false;
    const bool reshape = (m->opcode() == Opcode::kReshape || m->opcode() == Opcode::kBitcast) &&
                         shape.HasDefaultLayout() && m->operand(0)->shape().HasDefaultLayout();
    if (!reshape && !(hlo::IsElementwise(m->opcode()) && shape.dims == m->operand(0)->shape().dims))
      return false;
    tainted.insert(m);
  }
  return true;
}

bool ThunkBuilder::TryOutputFusion(const Instruction& inst, Scope& scope,
                                   const ValueLayout& output) {
  const hlo::Computation& fused = *inst.called_computations().at(0);
  const Instruction* contraction = FindContraction(fused);
  if (contraction == nullptr || !output.shape.IsArray()) return false;
  // The library reads materialized operands: both must be fusion parameters.
  std::vector<int64_t> contraction_operands;
  for (const Instruction* operand : contraction->operands()) {
    if (operand->opcode() != Opcode::kParameter) return false;
    const int64_t number = operand->attr<hlo::ParameterAttrs>().number;
    const ValueLayout& value = scope[inst.operand(number)];
    if (!value.shape.IsArray()) return false;
    contraction_operands.push_back(value.buffer);
  }
  const char* counter = contraction->opcode() == Opcode::kDot ? "thunks.gemm" : "thunks.conv";
  if (fused.root() == contraction) {
    // Without an epilogue the library writes the fusion's output directly.
    auto thunk = MakeContractionThunk(*contraction, inst.name() + ".contraction",
                                      contraction_operands[0], contraction_operands[1],
                                      output.buffer);
    if (!thunk) return false;
    result_.counters[counter] += 1;
    scope.sequence.AddThunk(std::move(thunk));
    return true;
  }
  // The epilogue runs per GEMM block while it is in cache when it is elementwise over C;
  // otherwise as a kernel over the whole output after the call.
  const bool per_block = SupportsTileEpilogue(*contraction) && ElementwiseTail(fused, contraction) &&
                         output.shape.HasDefaultLayout() && output.shape.rank() > 0 &&
                         output.shape.ElementCount() == contraction->shape().ElementCount() &&
                         output.shape.dims.back() == contraction->shape().dims.back();
  LoopKernelSpec spec;
  spec.name = KernelSymbol(module_, inst.name() + ".epilogue");
  std::vector<int64_t> buffers;
  if (!scope.AppendArrayOperands(inst, spec.operands, buffers)) return false;
  const int64_t target = scope.Acquire(ArrayByteSize(contraction->shape()), scope.scratch_acquired);
  spec.operands.push_back(contraction->shape());
  buffers.push_back(target);
  spec.outputs.push_back(output.shape);
  buffers.push_back(output.buffer);
  std::shared_ptr<TileEpilogue> tile;
  if (per_block) tile = std::make_shared<TileEpilogue>(TileEpilogue{spec.name, buffers, nullptr});
  auto thunk = MakeContractionThunk(*contraction, inst.name() + ".contraction",
                                    contraction_operands[0], contraction_operands[1], target, tile);
  if (!thunk) return false;
  GeneratorFactory factory = [&](ElementalEmitter& emitter, std::vector<ElementGenerator> loads) {
    // Walk the fused computation; the contraction reads its scratch result.
    std::map<const Instruction*, ElementGenerator> generators;
    for (const auto& member : fused.instructions()) {
      const Instruction* m = member.get();
      if (m->opcode() == Opcode::kParameter) {
        generators[m] = loads.at(static_cast<size_t>(m->attr<hlo::ParameterAttrs>().number));
      } else if (m == contraction) {
        generators[m] = loads.back();
      } else {
        std::vector<ElementGenerator> operands;
        for (const Instruction* operand : m->operands()) {
          auto it = generators.find(operand);
          if (it == generators.end())
            throw hlo::Error("cpu backend: no element generator for " + Describe(*operand));
          operands.push_back(it->second);
        }
        generators[m] = emitter.MakeGenerator(*m, std::move(operands));
      }
    }
    return std::vector<ElementGenerator>{generators.at(fused.root())};
  };
  try {
    if (per_block) {
      EmitTileKernel(module_, spec, factory);
    } else {
      EmitLoopKernel(module_, spec, factory);
    }
  } catch (const hlo::Error&) {
    if (llvm::Function* f = module_.getFunction(spec.name)) f->eraseFromParent();
    return false;
  }
  result_.counters[counter] += 1;
  scope.sequence.AddThunk(std::move(thunk));
  if (per_block) {
    result_.tile_epilogues.push_back(tile);
    result_.counters["epilogues.per-block"] += 1;
  } else {
    AddKernelThunk(inst.name(), scope, spec.name, std::move(buffers), output.shape,
                   /*work_per_element=*/1, /*loop_kernel=*/true);
  }
  return true;
}

}  // namespace cpu
