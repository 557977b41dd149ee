// Lower (lowering.h): walks the entry computation, assigns DRAM, emits segments, falls back.
#include "targets/systolic/lowering/lowering.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "compiler/memory/value_sizes.h"
#include "simulator/isa/disassembler.h"
#include "targets/systolic/lowering/consumer_fusion.h"
#include "targets/systolic/lowering/emit_block_copy.h"
#include "targets/systolic/lowering/emit_gather.h"
#include "targets/systolic/lowering/emit_reduce_window.h"
#include "targets/systolic/lowering/emit_scatter.h"
#include "targets/systolic/lowering/emit_sort.h"
#include "targets/systolic/lowering/control_on_device.h"
#include "targets/systolic/lowering/fused_constants.h"
#include "targets/systolic/lowering/native_ops.h"
#include "targets/systolic/lowering/emit_conv.h"
#include "targets/systolic/lowering/emit_conv_chain.h"
#include "targets/systolic/lowering/emit_data_movement.h"
#include "targets/systolic/lowering/emit_matmul.h"
#include "targets/systolic/lowering/emit_vector.h"
#include "targets/systolic/lowering/program_builder.h"
#include "targets/systolic/lowering/row_program.h"
#include "targets/systolic/lowering/scratchpad.h"
#include "targets/systolic/lowering/segment_builder.h"

namespace systolic::lowering {
namespace {

using hlo::Instruction;
using hlo::Opcode;

std::vector<const hlo::Shape*> Leaves(const hlo::Shape& shape) {
  std::vector<const hlo::Shape*> leaves;
  hlo::FlattenShape(shape, leaves);
  return leaves;
}

class Lowerer {
 public:
  Lowerer(const hlo::Module& module, const ArchConfig& config)
      : module_(module), config_(config), dram_(*module.entry(), config) {
    segment_.set_zero_region(dram_.zeros());  // halos of on-chip convolution inputs
  }

  LoweredModule Run() {
    const hlo::Computation& entry = *module_.entry();
    out_.parameters.resize(static_cast<size_t>(entry.parameter_count()));
    for (const Instruction* param : entry.parameters()) {
      out_.parameter_shapes.push_back(param ? param->shape() : hlo::Shape());
    }
    // Values written before the first step come first, so they never share bytes.
    for (const auto& owned : entry.instructions()) {
      if (owned->opcode() == Opcode::kParameter) {
        values_[owned.get()] = dram_.Allocate(*owned);
        out_.parameters[static_cast<size_t>(owned->attr<hlo::ParameterAttrs>().number)] =
            values_[owned.get()];
      } else if (owned->opcode() == Opcode::kConstant) {
        LowerConstant(*owned);
      }
    }
    for (const auto& owned : entry.instructions()) {
      Lower(*owned);
      dram_.Retire(dram_.Position(*owned));
    }
    Flush();
    out_.result = values_.at(entry.root());
    out_.result_shape = entry.root()->shape();
    out_.dram_bytes = dram_.peak();
    return std::move(out_);
  }

 private:
  // `inst` reads the same DRAM bytes as `leaves`.
  void Alias(const Instruction& inst, std::vector<DramBuffer> leaves) {
    dram_.Alias(inst, leaves);
    values_[&inst] = std::move(leaves);
  }

  void Lower(const Instruction& inst) {
    if (fused_consumers_.count(&inst)) return;  // emitted with its producer
    switch (inst.opcode()) {
      case Opcode::kParameter:
      case Opcode::kConstant:
        return;  // allocated (and constants recorded) before the first step
      case Opcode::kWhile:
        LowerLoop(inst);
        return;
      case Opcode::kConditional:
        LowerBranches(inst);
        return;
      case Opcode::kTuple: {
        std::vector<DramBuffer> leaves;
        for (const Instruction* operand : inst.operands()) {
          const auto& part = values_.at(operand);
          leaves.insert(leaves.end(), part.begin(), part.end());
        }
        Alias(inst, std::move(leaves));
        return;
      }
      case Opcode::kGetTupleElement: {
        const auto& tuple = inst.operand(0)->shape().tuple_shapes;
        size_t index = static_cast<size_t>(inst.attr<hlo::TupleIndexAttrs>().index);
        size_t first = 0;
        for (size_t i = 0; i < index; ++i) first += Leaves(tuple[i]).size();
        const auto& all = values_.at(inst.operand(0));
        Alias(inst, std::vector<DramBuffer>(
                        all.begin() + static_cast<std::ptrdiff_t>(first),
                        all.begin() + static_cast<std::ptrdiff_t>(first + Leaves(tuple[index]).size())));
        return;
      }
      case Opcode::kReshape:
      case Opcode::kBitcast:
      case Opcode::kCopy:  // values are logical row-major in DRAM: a copy changes nothing
        if (inst.shape().IsArray() && inst.shape().HasDefaultLayout() &&
            inst.operand(0)->shape().HasDefaultLayout() &&
            inst.shape().type == inst.operand(0)->shape().type) {
          DramBuffer alias = values_.at(inst.operand(0)).at(0);
          alias.shape = inst.shape();
          Alias(inst, {alias});
          return;
        }
        break;
      case Opcode::kCustomCall:
        // An annotation for a later XLA pass (Sharding, SPMD shape changes of a one-device
        // run, device placement) computes nothing: its value is its operand's.
        if (compiler::memory::IsAliasing(inst)) {
          Alias(inst, values_.at(inst.operand(0)));
          return;
        }
        break;
      default:
        break;
    }
    // A contraction and its lone elementwise user (consumer_fusion.h), analyzed once for both
    // ways of lowering it as one op.
    std::optional<ContractionWithConsumer> pair = AnalyzeWithConsumer(
        inst, *module_.entry()->root(),
        [this](const Instruction* value) { return values_.count(value) > 0; });
    if (pair && TryConvChain(inst, *pair)) return;
    if (pair && TryFuseWithConsumer(inst, *pair)) return;
    std::string why;
    bool no_instruction = false;
    if (std::optional<bool> own = TryOwnProgram(inst, &why)) {
      if (!*own) LowerOnHost(inst, why);
      return;
    }
    if (TryNative(inst, &why, &no_instruction)) return;
    LowerOnHost(inst, why, no_instruction && inst.opcode() != Opcode::kFusion);
  }

  // The ops that are programs of their own (never fused: TargetDescription::unfused_opcodes,
  // and a depthwise convolution): whether the program was emitted, or nullopt for any other op.
  std::optional<bool> TryOwnProgram(const Instruction& inst, std::string* why) {
    switch (inst.opcode()) {
      case Opcode::kSlice: case Opcode::kConcatenate: case Opcode::kPad:
      case Opcode::kDynamicSlice: case Opcode::kDynamicUpdateSlice: case Opcode::kReverse:
        return TryBlockCopies(inst, why);
      case Opcode::kGather: return TryGather(inst, why);
      case Opcode::kScatter: return TryScatter(inst, why);
      case Opcode::kReduceWindow: return TryReduceWindow(inst, why);
      case Opcode::kSort: case Opcode::kTopK: return TrySort(inst, why);
      case Opcode::kIota: return TryIota(inst, why);
      case Opcode::kConvolution:
        if (IsDepthwiseConv(inst, nullptr)) return TryDepthwiseConv(inst, why);
        return std::nullopt;
      default:
        return std::nullopt;
    }
  }

  // A dot or convolution with a lone elementwise user is one op, the user its epilogue
  // (consumer_fusion.h), emitted at the producer's position. False (nothing emitted) when the
  // pair does not fit.
  bool TryFuseWithConsumer(const Instruction& producer, const ContractionWithConsumer& view) {
    // A consumer that reads stashed dot results runs as a row computation, which reads them
    // in place; as a dot's epilogue it would load them from DRAM tile by tile.
    for (const Instruction* operand : view.operands) {
      if (segment_.IsStashed(operand)) return false;
    }
    const Instruction& consumer = *view.consumer;
    ExternalIndex external = [&view](const Instruction* x) { return view.External(x); };
    std::optional<RowProgram> program = view.program;
    std::vector<uint64_t> params;
    for (const Instruction* value : view.operands) {
      params.push_back(values_.at(value).at(0).address);
    }
    const LocalOperands local = segment_.PlanLocal(*program, external, view.operands, consumer,
                                                   /*is_root=*/false);
    // A dry run first: the result's DRAM is taken only when the pair fits.
    std::string why;
    bool half = false;
    try {
      ProgramBuilder probe;
      if (!EmitPlaced(probe, &half, external, std::nullopt, program, params, 0, &why, local)) {
        return false;
      }
    } catch (const hlo::Error&) {
      return false;
    }
    std::vector<DramBuffer> result = dram_.Allocate(consumer);
    ProgramBuilder op_builder;
    if (!EmitPlaced(op_builder, &half, external, std::nullopt, program, params,
                    result[0].address, &why, local)) {
      throw hlo::Error("internal: fused " + producer.name() + " + " + consumer.name() +
                       " fitted its dry run only: " + why);
    }
    segment_.AppendOp(op_builder, producer.name() + "+" + consumer.name(), half, result,
                      {program->contraction}, local, consumer);
    values_[&consumer] = result;
    fused_consumers_.insert(&consumer);
    out_.native_instructions += 2;
    return true;
  }

  // Consecutive convolution layers, each (with its requantize consumer) feeding only the next
  // layer's input, as one op that keeps the activations on chip (emit_conv_chain.h), emitted at
  // the first layer's position. False (nothing emitted) when `first` does not start a chain of
  // two or more such layers or the chain does not fit; the layers are then lowered one by one.
  bool TryConvChain(const Instruction& first, const ContractionWithConsumer& first_pair) {
    std::vector<ContractionWithConsumer> pairs;
    std::vector<const Instruction*> producers;
    std::set<const Instruction*> inside;  // results of the chain's layers so far
    auto computed = [&](const Instruction* value) {
      return values_.count(value) > 0 || inside.count(value) > 0;
    };
    const Instruction* producer = &first;
    while (producer) {
      std::optional<ContractionWithConsumer> pair =
          pairs.empty() ? std::optional<ContractionWithConsumer>(first_pair)
                        : AnalyzeWithConsumer(*producer, *module_.entry()->root(), computed);
      if (!pair || pair->program.contraction->opcode() != Opcode::kConvolution) break;
      const Instruction& conv = *pair->program.contraction;
      std::optional<int64_t> input = pair->External(conv.operand(0));
      std::optional<int64_t> kernel = pair->External(conv.operand(1));
      if (!input || !kernel) break;
      const Instruction* input_value = pair->operands[static_cast<size_t>(*input)];
      if (pairs.empty() ? inside.count(input_value) > 0 : input_value != pairs.back().consumer) {
        break;
      }
      // Only the input comes from the chain; the kernel and anything else from outside it.
      bool outside = true;
      for (const Instruction* operand : pair->operands) {
        if (operand != input_value && inside.count(operand)) outside = false;
      }
      if (!outside) break;
      pairs.push_back(std::move(*pair));
      producers.push_back(producer);
      const Instruction* consumer = pairs.back().consumer;
      inside.insert(consumer);
      producer = consumer->users().size() == 1 ? consumer->users()[0] : nullptr;
    }
    if (pairs.size() < 2) return false;

    std::vector<ConvChainLayer> layers;
    for (const ContractionWithConsumer& pair : pairs) {
      ConvChainLayer layer;
      layer.program = &pair.program;
      for (const Instruction* operand : pair.operands) {
        layer.params.push_back(values_.count(operand) ? values_.at(operand).at(0).address : 0);
      }
      layer.input = *pair.External(pair.program.contraction->operand(0));
      layer.kernel = *pair.External(pair.program.contraction->operand(1));
      layers.push_back(std::move(layer));
    }
    const ArchConfig config = segment_.FullConfig();
    std::string why;
    {
      ProgramBuilder probe;  // a dry run: the result's DRAM is taken only when the chain fits
      if (!EmitConvChain(probe, layers, config, 0, dram_.zeros(), &why)) return false;
    }
    const Instruction& last = *pairs.back().consumer;
    std::vector<DramBuffer> result = dram_.Allocate(last);
    ProgramBuilder op_builder;
    if (!EmitConvChain(op_builder, layers, config, result[0].address, dram_.zeros(), &why)) {
      throw hlo::Error("internal: convolution chain from " + first.name() +
                       " fitted its dry run only: " + why);
    }
    std::string name;
    std::vector<const Instruction*> contractions;
    for (size_t i = 0; i < pairs.size(); ++i) {
      name += (i ? "," : "") + producers[i]->name() + "+" + pairs[i].consumer->name();
      contractions.push_back(pairs[i].program.contraction);
      if (i > 0) fused_consumers_.insert(producers[i]);
      fused_consumers_.insert(pairs[i].consumer);
    }
    segment_.AppendOp(op_builder, name, /*half=*/false, result, contractions, LocalOperands{},
                      last);
    values_[&last] = result;
    out_.native_instructions += 2 * static_cast<int64_t>(pairs.size());
    return true;
  }

  void LowerConstant(const Instruction& inst) {
    values_[&inst] = dram_.Allocate(inst);
    const hlo::Literal& literal = inst.attr<hlo::ConstantAttrs>().literal;
    if (!inst.shape().IsArray()) {
      std::vector<const hlo::Literal*> parts;
      FlattenLiteral(literal, parts);
      for (size_t i = 0; i < parts.size(); ++i) {
        out_.constants.emplace_back(values_[&inst][i], CopyLiteral(*parts[i]));
      }
      return;
    }
    out_.constants.emplace_back(values_[&inst][0], CopyLiteral(literal));
  }
  static void FlattenLiteral(const hlo::Literal& literal, std::vector<const hlo::Literal*>& out) {
    if (!literal.IsTuple()) {
      out.push_back(&literal);
      return;
    }
    for (const hlo::Literal& element : literal.elements()) FlattenLiteral(element, out);
  }
  static hlo::Literal CopyLiteral(const hlo::Literal& literal) {
    hlo::Literal copy(literal.shape());
    std::copy(literal.bytes().begin(), literal.bytes().end(), copy.mutable_bytes().begin());
    return copy;
  }

  // False with the reason when `inst` does not run on the accelerator; `*no_instruction` when
  // the reason is the op itself, not its shape or what the unified buffer holds.
  bool TryNative(const Instruction& inst, std::string* why, bool* no_instruction) {
    if (!inst.shape().IsArray()) {
      *why = "tuple-shaped result";
      return false;
    }
    for (const Instruction* operand : inst.operands()) {
      if (!operand->shape().IsArray()) {
        *why = "tuple operand";
        return false;
      }
    }
    const Instruction* root = &inst;
    ExternalIndex external;
    bool allow_dot = inst.opcode() == Opcode::kDot || inst.opcode() == Opcode::kConvolution;
    if (inst.opcode() == Opcode::kFusion) {
      root = inst.called_computations().at(0)->root();
      allow_dot = true;  // output fusions, and custom fusions around a lone dot
      external = [](const Instruction* x) -> std::optional<int64_t> {
        if (x->opcode() != Opcode::kParameter) return std::nullopt;
        return x->attr<hlo::ParameterAttrs>().number;
      };
    } else {
      hlo::OpClass cls = hlo::OpcodeClass(inst.opcode());
      bool vector_op = cls == hlo::OpClass::kElementwiseUnary ||
                       cls == hlo::OpClass::kElementwiseBinary ||
                       cls == hlo::OpClass::kElementwiseTernary ||
                       inst.opcode() == Opcode::kReduce || inst.opcode() == Opcode::kBroadcast ||
                       inst.opcode() == Opcode::kDot || inst.opcode() == Opcode::kTranspose ||
                       inst.opcode() == Opcode::kConvolution;
      if (!vector_op) {
        *why = "no accelerator lowering for " + std::string(hlo::OpcodeName(inst.opcode()));
        *no_instruction = true;
        return false;
      }
      external = [&inst](const Instruction* x) -> std::optional<int64_t> {
        for (int64_t i = 0; i < inst.operand_count(); ++i) {
          if (inst.operand(i) == x) return i;
        }
        return std::nullopt;
      };
    }
    std::optional<TransposePlan> transpose = AnalyzeTranspose(*root, external, nullptr);
    std::optional<RowProgram> program;
    if (!transpose &&
        !(program = AnalyzeRows(*root, external, allow_dot, why, {}, no_instruction,
                                [&inst](int64_t i) { return inst.operand(i); }))) {
      // A fused op the accelerator does not run says why in the description's words.
      if (inst.opcode() == Opcode::kFusion) {
        for (const auto& fused : inst.called_computations().at(0)->instructions()) {
          if (std::optional<std::string> reason = IntrinsicHostReason(*fused)) {
            *why = fused->name() + " (" + std::string(hlo::OpcodeName(fused->opcode())) +
                   "): " + *reason;
            break;
          }
        }
      }
      return false;
    }
    const std::vector<uint64_t> params = OperandAddresses(inst);
    // Emit into a scratch builder first, so a failure leaves the segment untouched.
    std::vector<DramBuffer> result = dram_.Allocate(inst);
    ProgramBuilder op_builder;
    bool half = false;
    bool ok = false;
    LocalOperands local;
    try {
      std::vector<const Instruction*> operands(inst.operands().begin(), inst.operands().end());
      local = program ? segment_.PlanLocal(*program, external, operands, inst,
                                           &inst == module_.entry()->root())
                      : LocalOperands{};
      ok = EmitPlaced(op_builder, &half, external, transpose, program, params,
                      result[0].address, why, local);
    } catch (const hlo::Error& e) {  // e.g. a stride beyond the 32-bit registers
      *why = e.what();
    }
    if (!ok) {
      values_[&inst] = result;  // the host step below writes the same buffer
      return false;
    }
    std::vector<const Instruction*> contractions;
    if (program && program->contraction) contractions.push_back(program->contraction);
    segment_.AppendOp(op_builder, inst.name(), half, result, contractions, local, inst);
    values_[&inst] = result;
    ++out_.native_instructions;
    return true;
  }

  // An iota as viota tiles stored to its DRAM buffer (emit_block_copy.h, EmitIota).
  bool TryIota(const Instruction& inst, std::string* why) {
    return AppendOwnOp(inst, why, [&](ProgramBuilder& b, const ArchConfig& config,
                                      uint64_t result, std::string* reason) {
      return EmitIota(b, inst, config, result, reason);
    });
  }

  // An op with nothing on chip before or after it (a DMA program, an iota): emitted on one
  // half of the UB when it fits there, else on all of it, each attempt into a fresh builder;
  // appended to the segment. False with the reason (the result's DRAM stays allocated for the
  // host step).
  bool AppendOwnOp(const Instruction& inst, std::string* why,
                   const std::function<bool(ProgramBuilder&, const ArchConfig&, uint64_t,
                                            std::string*)>& emit) {
    return AppendOwnMultiResultOp(
        inst, why,
        [&](ProgramBuilder& b, const ArchConfig& config, const std::vector<uint64_t>& results,
            std::string* reason) { return emit(b, config, results[0], reason); });
  }
  // The same for an op with a tuple of results (a sort with a payload, a top-k): `emit` gets
  // each leaf's DRAM address.
  bool AppendOwnMultiResultOp(
      const Instruction& inst, std::string* why,
      const std::function<bool(ProgramBuilder&, const ArchConfig&, const std::vector<uint64_t>&,
                               std::string*)>& emit) {
    std::vector<DramBuffer> result = dram_.Allocate(inst);
    values_[&inst] = result;  // a host step, if any, writes the same buffer
    std::vector<uint64_t> addresses;
    for (const DramBuffer& leaf : result) addresses.push_back(leaf.address);
    ProgramBuilder op_builder;
    bool half = true;
    bool ok = false;
    try {
      std::string ignored;
      ok = emit(op_builder, segment_.HalfConfig(), addresses, &ignored);
      if (!ok) {
        half = false;
        op_builder = ProgramBuilder();  // the half attempt may have emitted before failing
        ok = emit(op_builder, segment_.FullConfig(), addresses, why);
      }
    } catch (const hlo::Error& e) {  // e.g. a stride beyond the 32-bit registers
      *why = e.what();
      ok = false;
    }
    if (!ok) return false;
    segment_.AppendOp(op_builder, inst.name(), half, result, {}, LocalOperands{}, inst);
    ++out_.native_instructions;
    return true;
  }

  // The DRAM address of each (array) operand of `inst`.
  std::vector<uint64_t> OperandAddresses(const Instruction& inst) const {
    std::vector<uint64_t> addresses;
    for (const Instruction* operand : inst.operands()) {
      addresses.push_back(values_.at(operand).at(0).address);
    }
    return addresses;
  }

  // Slice, concatenate and pad as strided DMA copies through the unified buffer
  // (emit_block_copy.h). False (nothing emitted, the reason in `why`) for forms the plan does
  // not take.
  bool TryBlockCopies(const Instruction& inst, std::string* why) {
    std::optional<BlockCopyPlan> plan = PlanBlockCopies(inst, why);
    if (!plan) return false;
    const std::vector<uint64_t> params = OperandAddresses(inst);
    return AppendOwnOp(inst, why, [&](ProgramBuilder& b, const ArchConfig& config,
                                      uint64_t result, std::string* reason) {
      return EmitBlockCopies(b, *plan, config, params, result, reason);
    });
  }

  // A row gather as index-driven DMA (emit_gather.h); false (nothing emitted, the reason in
  // `why`) for other forms.
  bool TryGather(const Instruction& inst, std::string* why) {
    std::optional<RowGatherPlan> plan = PlanRowGather(inst, why);
    if (!plan) return false;
    const std::vector<uint64_t> params = OperandAddresses(inst);
    return AppendOwnOp(inst, why, [&](ProgramBuilder& b, const ArchConfig& config,
                                      uint64_t result, std::string* reason) {
      return EmitRowGather(b, *plan, config, params[0], params[1], result, reason);
    });
  }

  // A row scatter as a copy and index-driven DMA (emit_scatter.h); false (nothing emitted,
  // the reason in `why`) for other forms.
  bool TryScatter(const Instruction& inst, std::string* why) {
    std::optional<RowScatterPlan> plan = PlanRowScatter(inst, why);
    if (!plan) return false;
    const std::vector<uint64_t> params = OperandAddresses(inst);
    return AppendOwnOp(inst, why, [&](ProgramBuilder& b, const ArchConfig& config,
                                      uint64_t result, std::string* reason) {
      return EmitRowScatter(b, *plan, config, params[0], params[1], params[2], result, reason);
    });
  }

  // A sort or top-k on the vector unit's bitonic network (emit_sort.h).
  bool TrySort(const Instruction& inst, std::string* why) {
    std::optional<SortPlan> plan = PlanSort(inst, why);
    if (!plan) return false;
    const std::vector<uint64_t> params = OperandAddresses(inst);
    return AppendOwnMultiResultOp(
        inst, why,
        [&](ProgramBuilder& b, const ArchConfig& config, const std::vector<uint64_t>& results,
            std::string* reason) { return EmitSort(b, *plan, config, params, results, reason); });
  }

  // A depthwise convolution as strided boxes times per-channel weights, summed on the vector
  // unit (emit_reduce_window.h): the matrix unit has no use for one input channel per group.
  bool TryDepthwiseConv(const Instruction& inst, std::string* why) {
    const std::vector<uint64_t> params = OperandAddresses(inst);
    return AppendOwnOp(inst, why, [&](ProgramBuilder& b, const ArchConfig& config,
                                      uint64_t result, std::string* reason) {
      return EmitDepthwiseConv(b, inst, config, params[0], params[1], result, reason);
    });
  }

  // A reduce-window as strided boxes folded on the vector unit (emit_reduce_window.h).
  bool TryReduceWindow(const Instruction& inst, std::string* why) {
    const uint64_t operand = OperandAddresses(inst)[0];
    return AppendOwnOp(inst, why, [&](ProgramBuilder& b, const ArchConfig& config,
                                      uint64_t result, std::string* reason) {
      return EmitReduceWindow(b, inst, config, operand, result, reason);
    });
  }

  // Emits an op on one half of the UB and of the accumulators when it fits there (`*half`),
  // else on all of it but the resident regions (segment_builder.h).
  bool EmitPlaced(ProgramBuilder& op_builder, bool* half, const ExternalIndex& external,
                  const std::optional<TransposePlan>& transpose,
                  const std::optional<RowProgram>& program, const std::vector<uint64_t>& params,
                  uint64_t result, std::string* why, const LocalOperands& local) {
    {
      // AppendOp moves a half-size op's local addresses to its half: resident ones must not
      // move, so they are handed to the emitter less that offset.
      const uint64_t shift = segment_.NextHalfUbOffset();
      LocalOperands shifted = local;
      if (shifted.lhs) *shifted.lhs -= shift;
      if (shifted.result) *shifted.result -= shift;
      if (shifted.result_rows) *shifted.result_rows -= shift;
      for (auto& [index, address] : shifted.operand_rows) address -= shift;
      ProgramBuilder attempt;
      std::string ignored;
      if (Emit(attempt, external, transpose, program, params, result, &ignored,
               segment_.HalfConfig(), shifted)) {
        *half = true;
        op_builder = std::move(attempt);
        return true;
      }
    }
    *half = false;
    return Emit(op_builder, external, transpose, program, params, result, why,
                segment_.FullConfig(), local);
  }

  // Emits one op with the emitter of its family; false (with the reason) when it does not fit.
  bool Emit(ProgramBuilder& op_builder, const ExternalIndex& external,
            const std::optional<TransposePlan>& transpose,
            const std::optional<RowProgram>& program, const std::vector<uint64_t>& params,
            uint64_t result, std::string* why, const ArchConfig& config,
            const LocalOperands& local) {
    // `config` is the op's share of local memory (EmitPlaced).
    bool ok;
    if (transpose) {
      ok = EmitTranspose(op_builder, *transpose, config,
                         params[static_cast<size_t>(transpose->operand)], result, why);
    } else if (program->contraction && program->contraction->opcode() == Opcode::kConvolution) {
      const Instruction& conv = *program->contraction;
      ok = EmitConvFusion(op_builder, *program, config, params, *external(conv.operand(0)),
                          *external(conv.operand(1)), result, dram_.zeros(), why, local);
    } else if (program->contraction) {
      std::optional<int64_t> lhs = external(program->contraction->operand(0));
      std::optional<int64_t> rhs = external(program->contraction->operand(1));
      ok = EmitMatmulFusion(op_builder, *program, config, params, *lhs, *rhs, result, why, local);
    } else {
      ok = EmitRowFusion(op_builder, *program, config, params, result, why, local.operand_rows);
    }
    return ok;
  }

  void LowerOnHost(const Instruction& inst, const std::string& why, bool no_instruction = false) {
    Flush();
    HostStep step;
    step.module = HostStepModule(module_, inst);
    for (const Instruction* operand : inst.operands()) step.operands.push_back(values_.at(operand));
    if (!values_.count(&inst)) values_[&inst] = dram_.Allocate(inst);
    step.result = values_[&inst];
    step.instruction = inst.name();
    step.reason = why;
    step.no_instruction = no_instruction;
    out_.steps.emplace_back(std::move(step));
    ++out_.host_instructions;
  }

  void LowerLoop(const Instruction& inst) {
    Flush();
    LoopStep step;
    step.condition = ComputationModule(module_, *inst.called_computations().at(0));
    step.body = ComputationModule(module_, *inst.called_computations().at(1));
    LoweredModule condition = lowering::Lower(*step.condition, config_);
    LoweredModule body = lowering::Lower(*step.body, config_);
    if (std::string need = HostNeed(condition); !need.empty()) {
      step.host_reason = "condition: " + need;
    } else if (need = HostNeed(body); !need.empty()) {
      step.host_reason = "body: " + need;
    }
    step.on_device = step.host_reason.empty();
    if (step.on_device) {
      EndWithTest(condition.steps, PredicateTest(condition.result.at(0).address));
      ++out_.device_loops;
    }
    step.lowered_condition = std::make_shared<const LoweredModule>(std::move(condition));
    step.lowered_body = std::make_shared<const LoweredModule>(std::move(body));
    step.state = values_.at(inst.operand(0));
    values_[&inst] = dram_.Allocate(inst);
    step.result = values_[&inst];
    step.instruction = inst.name();
    out_.steps.emplace_back(std::move(step));
    ++out_.loops;
  }

  void LowerBranches(const Instruction& inst) {
    Flush();
    BranchStep step;
    for (const hlo::Computation* branch : inst.called_computations()) {
      step.branches.push_back(ComputationModule(module_, *branch));
      LoweredModule lowered = lowering::Lower(*step.branches.back(), config_);
      const std::string need = HostNeed(lowered);
      if (step.host_reason.empty() && !need.empty()) {
        step.host_reason = "branch " + std::to_string(step.lowered_branches.size()) + ": " + need;
      }
      step.lowered_branches.push_back(std::make_shared<const LoweredModule>(std::move(lowered)));
    }
    step.selector = values_.at(inst.operand(0));
    step.on_device = step.host_reason.empty();
    if (step.on_device) {  // the selector read at the end of the program before the branch
      const uint64_t selector = step.selector.at(0).address;
      const bool pred = inst.operand(0)->shape().type == hlo::PrimitiveType::kPred;
      EndWithTest(out_.steps, pred ? PredicateTest(selector)
                                   : BranchIndexTest(selector, inst.operand_count() - 1));
      ++out_.device_loops;
    }
    for (int64_t i = 1; i < inst.operand_count(); ++i) {
      step.operands.push_back(values_.at(inst.operand(i)));
    }
    values_[&inst] = dram_.Allocate(inst);
    step.result = values_[&inst];
    step.instruction = inst.name();
    out_.steps.emplace_back(std::move(step));
    ++out_.loops;
  }

  void Flush() {
    if (segment_.empty()) return;
    out_.steps.emplace_back(segment_.Finish());
  }


  const hlo::Module& module_;
  const ArchConfig& config_;
  DramPlan dram_;
  LoweredModule out_;
  std::map<const Instruction*, std::vector<DramBuffer>> values_;
  std::set<const Instruction*> fused_consumers_;  // lowered together with their producer
  SegmentBuilder segment_{config_};
};

}  // namespace

std::string LoweredModule::Assembly() const {
  std::string text;
  int segment = 0;
  for (const Step& step : steps) {
    if (const auto* accel = std::get_if<AcceleratorStep>(&step)) {
      text += "# segment " + std::to_string(segment++) + ":";
      for (const std::string& op : accel->ops) text += " " + op;
      text += "\n" + Disassemble(accel->program);
    } else if (const auto* host = std::get_if<HostStep>(&step)) {
      text += "# host: " + host->instruction + " (" + host->reason + ")\n";
    } else if (const auto* loop = std::get_if<LoopStep>(&step)) {
      text += "# loop: " + loop->instruction +
              (loop->on_device
                   ? " (on the device: the condition ends with ctrl.test, the control unit's "
                     "loop sequencer starts the body while its flag is set)\n"
                   : " (under host control: " + loop->host_reason + ")\n");
      text += "# loop " + loop->instruction + ", condition:\n" +
              loop->lowered_condition->Assembly();
      text += "# loop " + loop->instruction + ", body:\n" + loop->lowered_body->Assembly();
      text += "# end of loop " + loop->instruction + "\n";
    } else {
      const BranchStep& branch = std::get<BranchStep>(step);
      text += "# branch: " + branch.instruction +
              (branch.on_device ? " (on the device: the control unit's sequencer starts the "
                                  "branch the ctrl.test / ctrl.index before it chose)\n"
                                : " (chosen by the host: " + branch.host_reason + ")\n");
      for (size_t b = 0; b < branch.lowered_branches.size(); ++b) {
        text += "# branch " + branch.instruction + ", branch " + std::to_string(b) + ":\n" +
                branch.lowered_branches[b]->Assembly();
      }
      text += "# end of branch " + branch.instruction + "\n";
    }
  }
  return text;
}

LoweredModule Lower(const hlo::Module& optimized, const ArchConfig& config) {
  if (std::unique_ptr<hlo::Module> outlined = OutlineFusedArrayConstants(optimized)) {
    return Lowerer(*outlined, config).Run();
  }
  return Lowerer(optimized, config).Run();
}

}  // namespace systolic::lowering
