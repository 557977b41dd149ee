// ReadHloProto / WriteHloProto: modules, computations, instruction ids and ordering.
//
// Guarantees of ReadHloProto: it either returns a module whose every operand and called
// computation resolved, whose computations are ordered callees-first, whose instructions are in
// a topological order, and whose constants hold exactly the proto's bits -- or it throws
// hlo::Error located at the input file (line 0) naming the offending computation/instruction.
// It never crashes or allocates without bound on malformed input (garbage, truncation, dangling
// ids, cycles, absurd shapes: see proto_shape_literal.cc for the shape/literal checks).
// WriteHloProto writes XLA's fields (so XLA can load the file) plus Retarget's extension fields
// (so reading it back reproduces the module exactly; see proto_opaque.cc).
#include "hlo/proto_io.h"

#include <google/protobuf/stubs/logging.h>

#include <climits>
#include <unordered_map>
#include <unordered_set>

#include "hlo/proto_internal.h"

namespace hlo {
namespace {

using proto_internal::Fail;

// XLA orders a while's called computations {body, condition}; the IR keeps {condition, body}.
std::vector<Computation*> CalledInXlaOrder(const Instruction& instruction) {
  std::vector<Computation*> called = instruction.called_computations();
  if (instruction.opcode() == Opcode::kWhile && called.size() == 2) std::swap(called[0], called[1]);
  return called;
}

// ----- writing ------------------------------------------------------------------------------------

// Instruction ids: the module's own when they are all set and unique (so ids survive a round
// trip), otherwise 0, 1, 2, ... in computation/definition order.
std::unordered_map<const Instruction*, int64_t> InstructionIds(const Module& module) {
  std::unordered_map<const Instruction*, int64_t> ids;
  std::unordered_set<int64_t> seen;
  bool own_ids_usable = true;
  for (const auto& c : module.computations()) {
    for (const auto& inst : c->instructions()) {
      own_ids_usable = own_ids_usable && inst->id() >= 0 && seen.insert(inst->id()).second;
    }
  }
  int64_t next = 0;
  for (const auto& c : module.computations()) {
    for (const auto& inst : c->instructions()) {
      ids[inst.get()] = own_ids_usable ? inst->id() : next++;
    }
  }
  return ids;
}

// XLA rejects a module whose instruction names repeat (even across computations), which the IR
// allows; repeats get the first free `name.N`, in definition order.
std::unordered_map<const Instruction*, std::string> UniqueNames(const Module& module) {
  std::unordered_set<std::string> taken;
  for (const auto& c : module.computations()) {
    for (const auto& inst : c->instructions()) taken.insert(inst->name());
  }
  std::unordered_set<std::string> used;
  std::unordered_map<const Instruction*, std::string> renamed;
  for (const auto& c : module.computations()) {
    for (const auto& inst : c->instructions()) {
      if (used.insert(inst->name()).second) continue;
      std::string fresh;
      for (int suffix = 1; fresh.empty() || taken.count(fresh); ++suffix) {
        fresh = inst->name() + "." + std::to_string(suffix);
      }
      taken.insert(fresh);
      renamed[inst.get()] = fresh;
    }
  }
  return renamed;
}

void ProgramShapeToProto(const Computation& computation, xla::ProgramShapeProto* proto) {
  for (Instruction* parameter : computation.parameters()) {
    if (!parameter) continue;  // a gap in parameter numbers; the verifier reports it
    proto_internal::ShapeToProto(parameter->shape(), proto->add_parameters());
    proto->add_parameter_names(parameter->name());
  }
  if (computation.root()) {
    proto_internal::ShapeToProto(computation.root()->shape(), proto->mutable_result());
  }
}

void InstructionToProto(const Instruction& inst,
                        const std::unordered_map<const Instruction*, int64_t>& ids,
                        const std::unordered_map<const Computation*, int64_t>& computation_ids,
                        const std::unordered_map<const Instruction*, std::string>& renamed,
                        xla::HloInstructionProto* proto) {
  auto fresh = renamed.find(&inst);
  if (fresh == renamed.end()) {
    proto->set_name(inst.name());
  } else {
    proto->set_name(fresh->second);
    proto->set_retarget_name(inst.name());
  }
  proto->set_opcode(std::string(OpcodeName(inst.opcode())));
  proto_internal::ShapeToProto(inst.shape(), proto->mutable_shape());
  for (int32_t leaf : proto_internal::LayoutlessLeaves(inst.shape())) {
    proto->add_retarget_layoutless_leaves(leaf);
  }
  proto->set_id(ids.at(&inst));
  for (Instruction* operand : inst.operands()) {
    auto it = ids.find(operand);
    if (it == ids.end()) {
      throw Error(inst.location(), "cannot write instruction '" + inst.name() +
                                       "': an operand is not part of the module");
    }
    proto->add_operand_ids(it->second);
  }
  for (Computation* called : CalledInXlaOrder(inst)) {
    auto it = computation_ids.find(called);
    if (it == computation_ids.end()) {
      throw Error(inst.location(), "cannot write instruction '" + inst.name() +
                                       "': a called computation is not part of the module");
    }
    proto->add_called_computation_ids(it->second);
  }
  proto_internal::AttrsToProto(inst, proto);
  proto_internal::OpaqueAttributesToProto(inst.opaque_attributes(), proto);
}

// ----- reading ------------------------------------------------------------------------------------

std::string Quoted(const std::string& name) { return "'" + name + "'"; }

// XLA's protos spell out defaults its text leaves implicit: a compare's type that matches the
// operand type, and operand_precision={default,default}. For protos written by XLA these are
// dropped again, so the module prints like XLA's text of it and equals what our parser makes.
void DropXlaSpelledOutDefaults(Instruction& inst) {
  if (inst.has_attr<CompareAttrs>() && inst.operand_count() > 0) {
    auto& compare = inst.mutable_attr<CompareAttrs>();
    PrimitiveType type = inst.operand(0)->shape().type;
    ComparisonType implied = IsFloating(type)         ? ComparisonType::kFloat
                             : IsSignedInteger(type) ? ComparisonType::kSigned
                                                     : ComparisonType::kUnsigned;
    if (compare.type == implied) compare.type = ComparisonType::kDefault;
  }
  auto drop_all_default = [](PrecisionConfig& config) {
    for (Precision p : config.operand_precision) {
      if (p != Precision::kDefault) return;
    }
    config.operand_precision.clear();
  };
  if (inst.has_attr<DotAttrs>()) drop_all_default(inst.mutable_attr<DotAttrs>().precision);
  if (inst.has_attr<ConvolutionAttrs>()) {
    drop_all_default(inst.mutable_attr<ConvolutionAttrs>().precision);
  }
}

void ClearScalarLayouts(Shape& shape) {
  for (Shape& element : shape.tuple_shapes) ClearScalarLayouts(element);
  if (shape.IsArray() && shape.dims.empty()) shape.has_layout = false;
}

// Computation protos ordered so that every callee precedes its callers (XLA writes them that way,
// but a hand-made proto need not). Iterative DFS: call chains may be long.
std::vector<const xla::HloComputationProto*> CalleesFirst(
    const xla::HloModuleProto& proto,
    const std::unordered_map<int64_t, const xla::HloComputationProto*>& by_id,
    const SourceLocation& loc) {
  enum class Mark : uint8_t { kNone, kVisiting, kDone };
  std::unordered_map<const xla::HloComputationProto*, Mark> mark;
  std::vector<const xla::HloComputationProto*> order;
  auto callees = [&](const xla::HloComputationProto* c) {
    std::vector<const xla::HloComputationProto*> out;
    for (const auto& inst : c->instructions()) {
      for (int64_t id : inst.called_computation_ids()) {
        auto it = by_id.find(id);
        if (it == by_id.end()) {
          Fail(loc, "instruction " + Quoted(inst.name()) + " in computation " + Quoted(c->name()) +
                        " calls computation id " + std::to_string(id) + ", which does not exist");
        }
        out.push_back(it->second);
      }
    }
    return out;
  };
  for (const auto& root : proto.computations()) {
    if (mark[&root] != Mark::kNone) continue;
    std::vector<std::pair<const xla::HloComputationProto*,
                          std::vector<const xla::HloComputationProto*>>> stack;
    stack.emplace_back(&root, callees(&root));
    mark[&root] = Mark::kVisiting;
    while (!stack.empty()) {
      auto& [node, pending] = stack.back();
      if (!pending.empty()) {
        const xla::HloComputationProto* next = pending.back();
        pending.pop_back();
        if (mark[next] == Mark::kVisiting) {
          Fail(loc, "computation " + Quoted(next->name()) + " calls itself (directly or not)");
        }
        if (mark[next] == Mark::kNone) {
          mark[next] = Mark::kVisiting;
          auto next_callees = callees(next);
          stack.emplace_back(next, std::move(next_callees));
        }
        continue;
      }
      mark[node] = Mark::kDone;
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

struct ModuleBuilder {
  const xla::HloModuleProto& proto;
  SourceLocation loc;
  std::unique_ptr<Module> module;
  std::unordered_map<int64_t, Computation*> computations_by_id;

  void BuildComputation(const xla::HloComputationProto& cp, Computation* computation) {
    std::unordered_map<int64_t, Instruction*> by_id;
    std::string where = "computation " + Quoted(cp.name());
    for (const xla::HloInstructionProto& ip : cp.instructions()) {
      std::string what = "instruction " + Quoted(ip.name()) + " in " + where;
      if (ip.name().empty()) Fail(loc, "an instruction in " + where + " has no name");
      std::optional<Opcode> opcode = OpcodeFromName(ip.opcode());
      if (!opcode) Fail(loc, what + ": unknown opcode '" + ip.opcode() + "'");
      if (!ip.has_shape()) Fail(loc, what + ": missing shape");
      Shape shape = proto_internal::ShapeFromProto(ip.shape(), loc, what);
      if (proto.retarget_written()) {
        proto_internal::ClearLayouts(shape, {ip.retarget_layoutless_leaves().begin(),
                                             ip.retarget_layoutless_leaves().end()});
      } else {
        // XLA gives scalars an empty layout; its text (and so our parser) has none: `f32[]`.
        ClearScalarLayouts(shape);
      }
      auto inst = std::make_unique<Instruction>(
          ip.has_retarget_name() ? ip.retarget_name() : ip.name(), *opcode, shape);
      inst->set_attrs(proto_internal::AttrsFromProto(*opcode, ip, shape, loc, what));
      inst->mutable_opaque_attributes() = proto_internal::OpaqueAttributesFromProto(ip);
      inst->set_id(ip.id());
      inst->set_location(loc);
      for (int64_t id : ip.called_computation_ids()) {
        // Existence was checked while ordering computations.
        inst->mutable_called_computations().push_back(computations_by_id.at(id));
      }
      if (*opcode == Opcode::kWhile && inst->called_computations().size() == 2) {
        std::swap(inst->mutable_called_computations()[0], inst->mutable_called_computations()[1]);
      }
      if (!by_id.emplace(ip.id(), inst.get()).second) {
        Fail(loc, what + ": duplicate instruction id " + std::to_string(ip.id()));
      }
      computation->AddInstruction(std::move(inst));
    }
    // Operands second: a hand-made proto may list an operand after its user.
    for (int i = 0; i < cp.instructions_size(); ++i) {
      const xla::HloInstructionProto& ip = cp.instructions(i);
      Instruction* inst = by_id.at(ip.id());
      for (int64_t id : ip.operand_ids()) {
        auto it = by_id.find(id);
        if (it == by_id.end()) {
          Fail(loc, "instruction " + Quoted(ip.name()) + " in " + where + " uses operand id " +
                        std::to_string(id) + ", which is not defined in that computation");
        }
        inst->AppendOperand(it->second);
      }
      if (!proto.retarget_written()) DropXlaSpelledOutDefaults(*inst);
    }
    auto root = by_id.find(cp.root_id());
    if (root == by_id.end()) {
      Fail(loc, where + ": root id " + std::to_string(cp.root_id()) + " is not an instruction of it");
    }
    computation->set_root(root->second);
    computation->SortTopologically();
    for (const auto& entry : cp.retarget_opaque_attributes()) {
      computation->mutable_opaque_attributes().push_back({entry.name(), entry.value()});
    }
  }

  Computation* FindEntry() const {
    auto by_id = computations_by_id.find(proto.entry_computation_id());
    const std::string& name = proto.entry_computation_name();
    if (by_id != computations_by_id.end() && (name.empty() || by_id->second->name() == name)) {
      return by_id->second;
    }
    if (!name.empty()) {
      if (Computation* c = module->FindComputation(name)) return c;
      Fail(loc, "entry computation " + Quoted(name) + " does not exist");
    }
    // Neither given: as in text without ENTRY, the last computation is the entry.
    return module->computations().back().get();
  }

  std::unique_ptr<Module> Build() {
    module = std::make_unique<Module>(proto.name());
    if (proto.computations_size() == 0) Fail(loc, "the module has no computations");
    std::unordered_map<int64_t, const xla::HloComputationProto*> by_id;
    std::unordered_set<std::string> names;
    for (const auto& cp : proto.computations()) {
      if (!by_id.emplace(cp.id(), &cp).second) {
        Fail(loc, "duplicate computation id " + std::to_string(cp.id()) + " (computation " +
                      Quoted(cp.name()) + ")");
      }
      if (!names.insert(cp.name()).second) {
        Fail(loc, "duplicate computation name " + Quoted(cp.name()));
      }
    }
    std::vector<const xla::HloComputationProto*> order = CalleesFirst(proto, by_id, loc);
    std::vector<Computation*> created;
    for (const xla::HloComputationProto* cp : order) {
      auto computation = std::make_unique<Computation>(cp->name());
      computation->set_location(loc);
      computations_by_id[cp->id()] = computation.get();
      created.push_back(module->AddComputation(std::move(computation)));
    }
    for (size_t i = 0; i < order.size(); ++i) BuildComputation(*order[i], created[i]);
    module->set_entry(FindEntry());
    module->mutable_header_attributes() = proto_internal::HeaderAttributesFromProto(proto);
    module->mutable_trailing_tables() = proto.retarget_trailing_tables();
    module->mutable_leading_tables() = proto.retarget_leading_tables();
    // A proto from XLA carries the tables only as its index: printed before the computations,
    // where current XLA prints them.
    if (!proto.retarget_written() && proto.has_stack_frame_index()) {
      module->mutable_leading_tables() =
          proto_internal::StackFrameTablesText(proto.stack_frame_index());
    }
    return std::move(module);
  }
};

}  // namespace

std::unique_ptr<Module> ReadHloProto(std::string_view bytes, std::string_view filename) {
  SourceLocation loc{std::make_shared<const std::string>(filename), 0, 0};
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    Fail(loc, "proto is larger than 2 GiB, which protobuf cannot parse");
  }
  // Protobuf logs UTF-8 and parse problems to stderr; the hlo::Error below reports them instead.
  google::protobuf::LogSilencer silence_protobuf_logs;
  xla::HloModuleProto module_proto;
  {
    // A dump is an HloProto wrapper (module = field 1); a bare HloModuleProto has its name in
    // field 1, which does not parse as a module with computations.
    xla::HloProto wrapper;
    bool is_wrapper = wrapper.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) &&
                      wrapper.has_hlo_module();
    if (is_wrapper && wrapper.hlo_module().computations_size() > 0) {
      module_proto.Swap(wrapper.mutable_hlo_module());
    } else if (!module_proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      if (!is_wrapper) {
        Fail(loc, "not a valid HloProto or HloModuleProto (the protobuf wire format does not "
                  "parse; truncated or not a proto?)");
      }
      module_proto.Swap(wrapper.mutable_hlo_module());  // an empty module: reported below
    }
  }
  return ModuleBuilder{module_proto, loc, nullptr, {}}.Build();
}

std::string WriteHloProto(const Module& module, bool wrap) {
  xla::HloModuleProto proto;
  proto.set_name(module.name());
  std::unordered_map<const Instruction*, int64_t> ids = InstructionIds(module);
  std::unordered_map<const Instruction*, std::string> renamed = UniqueNames(module);
  std::unordered_map<const Computation*, int64_t> computation_ids;
  for (const auto& c : module.computations()) {
    computation_ids[c.get()] = static_cast<int64_t>(computation_ids.size());
  }
  std::unordered_set<const Computation*> fusion_bodies;
  for (const auto& c : module.computations()) {
    for (const auto& inst : c->instructions()) {
      if (inst->opcode() == Opcode::kFusion) {
        fusion_bodies.insert(inst->called_computations().begin(),
                             inst->called_computations().end());
      }
    }
  }
  for (const auto& c : module.computations()) {
    xla::HloComputationProto* cp = proto.add_computations();
    cp->set_name(c->name());
    cp->set_id(computation_ids.at(c.get()));
    cp->set_is_fusion_computation(fusion_bodies.count(c.get()) > 0);
    for (const auto& inst : c->instructions()) {
      InstructionToProto(*inst, ids, computation_ids, renamed, cp->add_instructions());
    }
    if (c->root()) cp->set_root_id(ids.at(c->root()));
    ProgramShapeToProto(*c, cp->mutable_program_shape());
    for (const OpaqueAttribute& a : c->opaque_attributes()) {
      xla::RetargetOpaqueAttribute* entry = cp->add_retarget_opaque_attributes();
      entry->set_name(a.name);
      entry->set_value(a.value);
    }
  }
  if (Computation* entry = module.entry()) {
    proto.set_entry_computation_name(entry->name());
    proto.set_entry_computation_id(computation_ids.at(entry));
    ProgramShapeToProto(*entry, proto.mutable_host_program_shape());
  }
  proto_internal::HeaderAttributesToProto(module.header_attributes(), &proto);
  proto.set_retarget_trailing_tables(module.trailing_tables());
  proto.set_retarget_leading_tables(module.leading_tables());
  // XLA reads metadata's stack_frame_id through this index (without it, it warns that every id
  // is invalid). Tables in a form XLA would not print stay in the extension fields only.
  xla::StackFrameIndexProto index;
  if (proto_internal::StackFrameIndexFromTables(module.leading_tables() + "\n" +
                                                    module.trailing_tables(),
                                                &index)) {
    proto.mutable_stack_frame_index()->Swap(&index);
  }
  proto.set_retarget_written(true);
  std::string out;
  if (wrap) {
    xla::HloProto wrapper;
    wrapper.mutable_hlo_module()->Swap(&proto);
    wrapper.SerializeToString(&out);
  } else {
    proto.SerializeToString(&out);
  }
  return out;
}

}  // namespace hlo
