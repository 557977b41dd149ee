// Manifest <-> JSON. Field names here are the documented format (docs/gpu-runtime.md); the
// reader rejects unknown step kinds, dtypes and epilogues by name, and leaves range checks to
// ValidateArtifact (artifact_validate.cc).
#include <limits>

#include "targets/gpu/artifact.h"

namespace gpu {
namespace {

Json Dim3(const std::array<uint32_t, 3>& d) { return Json::array({d[0], d[1], d[2]}); }
Json SliceJson(const Slice& s) { return {{"offset", s.offset}, {"bytes", s.bytes}}; }
Json SlotJson(const TensorSlot& t) {
  return {{"name", t.name},
          {"dtype", DTypeName(t.dtype)},
          {"shape", t.shape},
          {"slice", SliceJson(t.slice)}};
}

struct StepWriter {
  Json& o;
  void operator()(const KernelLaunch& k) const {
    o["module"] = k.module;
    o["entry"] = k.entry;
    o["grid"] = Dim3(k.grid);
    o["block"] = Dim3(k.block);
    o["shared_bytes"] = k.shared_bytes;
    Json args = Json::array();
    for (const KernelArg& a : k.args) {
      switch (a.kind) {
        case KernelArg::Kind::kBuffer: args.push_back({{"buffer", SliceJson(a.slice)}}); break;
        case KernelArg::Kind::kS32: args.push_back({{"s32", a.integer}}); break;
        case KernelArg::Kind::kS64: args.push_back({{"s64", a.integer}}); break;
        case KernelArg::Kind::kF32: args.push_back({{"f32", a.real}}); break;
      }
    }
    o["args"] = std::move(args);
  }
  void operator()(const MatmulCall& mm) const {
    o["dtype"] = DTypeName(mm.dtype);
    o["allow_tf32"] = mm.allow_tf32;
    o["m"] = mm.m;
    o["n"] = mm.n;
    o["k"] = mm.k;
    o["batch"] = mm.batch;
    o["transpose_a"] = mm.transpose_a;
    o["transpose_b"] = mm.transpose_b;
    o["lda"] = mm.lda;
    o["ldb"] = mm.ldb;
    o["ldd"] = mm.ldd;
    o["stride_a"] = mm.stride_a;
    o["stride_b"] = mm.stride_b;
    o["stride_d"] = mm.stride_d;
    o["alpha"] = mm.alpha;
    o["beta"] = mm.beta;
    o["epilogue"] = EpilogueName(mm.epilogue);
    o["a"] = SliceJson(mm.a);
    o["b"] = SliceJson(mm.b);
    o["d"] = SliceJson(mm.d);
    if (EpilogueHasBias(mm.epilogue)) o["bias"] = SliceJson(mm.bias);
  }
  void operator()(const ConvCall& c) const {
    o["dtype"] = DTypeName(c.dtype);
    o["input_dims"] = c.input_dims;
    o["filter_dims"] = c.filter_dims;
    o["output_dims"] = c.output_dims;
    o["strides"] = c.strides;
    o["padding_low"] = c.padding_low;
    o["padding_high"] = c.padding_high;
    o["dilations"] = c.dilations;
    o["groups"] = c.groups;
    o["input"] = SliceJson(c.input);
    o["filter"] = SliceJson(c.filter);
    o["output"] = SliceJson(c.output);
  }
  void operator()(const DeviceCopy& c) const {
    o["source"] = SliceJson(c.source);
    o["destination"] = SliceJson(c.destination);
  }
  void operator()(const WhileLoop& w) const {
    o["condition"] = w.condition;
    o["body"] = w.body;
    o["predicate"] = SliceJson(w.predicate);
  }
  void operator()(const Conditional& c) const {
    o["selector_dtype"] = DTypeName(c.selector_dtype);
    o["selector"] = SliceJson(c.selector);
    o["branches"] = c.branches;
  }
  void operator()(const StridedCopy& c) const {
    o["source"] = c.source;
    o["destination"] = c.destination;
    o["rows"] = c.rows;
    o["row_bytes"] = c.row_bytes;
    o["source_pitch"] = c.source_pitch;
    o["destination_pitch"] = c.destination_pitch;
  }
  void operator()(const Fill& f) const {
    o["destination"] = SliceJson(f.destination);
    o["value"] = f.value;
  }
  void operator()(const DeviceIdWrite& d) const {
    o["id"] = d.partition ? "partition" : "replica";
    o["destination"] = SliceJson(d.destination);
  }
  void operator()(const CollectiveCall& c) const {
    o["op"] = CollectiveName(c.op);
    o["dtype"] = DTypeName(c.dtype);
    if (c.op == Collective::kAllReduce || c.op == Collective::kReduceScatter)
      o["reduction"] = ReductionName(c.reduction);
    o["count"] = c.count;
    o["send"] = SliceJson(c.send);
    o["receive"] = SliceJson(c.receive);
    if (c.op == Collective::kSendReceive) {
      Json pairs = Json::array();
      for (const auto& [source, target] : c.pairs) pairs.push_back(Json::array({source, target}));
      o["pairs"] = std::move(pairs);
    } else {
      o["groups"] = c.groups;
    }
  }
};

Json StepsJson(const std::vector<Step>& steps) {
  Json list = Json::array();
  for (const Step& s : steps) {
    Json so = {{"kind", StepKindName(s)}, {"name", s.name}};
    std::visit(StepWriter{so}, s.call);
    list.push_back(std::move(so));
  }
  return list;
}

// ---- reading ----

uint64_t NonNegative(const Json& v, const std::string& what) {
  const int64_t i = AsInt(v, what);
  if (i < 0)
    throw ArtifactError("manifest: '" + what + "' is negative (" + std::to_string(i) + ")");
  return static_cast<uint64_t>(i);
}
Slice SliceFrom(const Json& v, const std::string& what) {
  return Slice{NonNegative(Get(v, "offset", what), what + ".offset"),
               NonNegative(Get(v, "bytes", what), what + ".bytes")};
}
std::vector<int64_t> IntsFrom(const Json& v, const std::string& what) {
  std::vector<int64_t> out;
  for (const Json& item : AsArray(v, what)) out.push_back(AsInt(item, what + "[]"));
  return out;
}
std::array<uint32_t, 3> Dim3From(const Json& v, const std::string& what) {
  const std::vector<int64_t> d = IntsFrom(v, what);
  if (d.size() != 3) throw ArtifactError("manifest: '" + what + "' must have 3 entries");
  std::array<uint32_t, 3> out{};
  for (int i = 0; i < 3; ++i) {
    if (d[i] < 1 || d[i] > std::numeric_limits<uint32_t>::max()) {
      throw ArtifactError("manifest: '" + what + "' entry " + std::to_string(d[i]) +
                          " out of range");
    }
    out[i] = static_cast<uint32_t>(d[i]);
  }
  return out;
}
DType DTypeFrom(const Json& v, const std::string& what) {
  const std::string& name = AsString(v, what);
  if (auto d = ParseDType(name)) return *d;
  throw ArtifactError("manifest: '" + what + "' has unknown dtype '" + name + "'");
}
std::string OptionalString(const Json& o, const char* key, const std::string& what) {
  const Json* v = Find(o, key);
  return v == nullptr ? std::string() : AsString(*v, what + "." + key);
}
TensorSlot SlotFrom(const Json& v, const std::string& what) {
  TensorSlot t;
  t.name = AsString(Get(v, "name", what), what + ".name");
  t.dtype = DTypeFrom(Get(v, "dtype", what), what + ".dtype");
  t.shape = IntsFrom(Get(v, "shape", what), what + ".shape");
  t.slice = SliceFrom(Get(v, "slice", what), what + ".slice");
  return t;
}

KernelLaunch KernelFrom(const Json& v, const std::string& what) {
  KernelLaunch k;
  k.module = AsString(Get(v, "module", what), what + ".module");
  k.entry = AsString(Get(v, "entry", what), what + ".entry");
  k.grid = Dim3From(Get(v, "grid", what), what + ".grid");
  k.block = Dim3From(Get(v, "block", what), what + ".block");
  const uint64_t shared = NonNegative(Get(v, "shared_bytes", what), what + ".shared_bytes");
  if (shared > std::numeric_limits<uint32_t>::max())
    throw ArtifactError("manifest: " + what + ".shared_bytes too large");
  k.shared_bytes = static_cast<uint32_t>(shared);
  for (const Json& a : AsArray(Get(v, "args", what), what + ".args")) {
    const std::string arg_what = what + ".args[" + std::to_string(k.args.size()) + "]";
    KernelArg arg;
    if (const Json* b = Find(a, "buffer")) {
      arg.kind = KernelArg::Kind::kBuffer;
      arg.slice = SliceFrom(*b, arg_what + ".buffer");
    } else if (const Json* i32 = Find(a, "s32")) {
      arg.kind = KernelArg::Kind::kS32;
      arg.integer = AsInt(*i32, arg_what + ".s32");
    } else if (const Json* i64 = Find(a, "s64")) {
      arg.kind = KernelArg::Kind::kS64;
      arg.integer = AsInt(*i64, arg_what + ".s64");
    } else if (const Json* f = Find(a, "f32")) {
      arg.kind = KernelArg::Kind::kF32;
      arg.real = AsDouble(*f, arg_what + ".f32");
    } else {
      throw ArtifactError("manifest: '" + arg_what + "' must be one of buffer, s32, s64, f32");
    }
    k.args.push_back(arg);
  }
  return k;
}

MatmulCall MatmulFrom(const Json& v, const std::string& what) {
  MatmulCall mm;
  auto integer = [&](const char* key) { return AsInt(Get(v, key, what), what + "." + key); };
  auto flag = [&](const char* key) { return AsBool(Get(v, key, what), what + "." + key); };
  mm.dtype = DTypeFrom(Get(v, "dtype", what), what + ".dtype");
  mm.allow_tf32 = flag("allow_tf32");
  mm.m = integer("m");
  mm.n = integer("n");
  mm.k = integer("k");
  mm.batch = integer("batch");
  mm.transpose_a = flag("transpose_a");
  mm.transpose_b = flag("transpose_b");
  mm.lda = integer("lda");
  mm.ldb = integer("ldb");
  mm.ldd = integer("ldd");
  mm.stride_a = integer("stride_a");
  mm.stride_b = integer("stride_b");
  mm.stride_d = integer("stride_d");
  mm.alpha = AsDouble(Get(v, "alpha", what), what + ".alpha");
  mm.beta = AsDouble(Get(v, "beta", what), what + ".beta");
  const std::string& epilogue = AsString(Get(v, "epilogue", what), what + ".epilogue");
  const auto parsed = ParseEpilogue(epilogue);
  if (!parsed)
    throw ArtifactError("manifest: '" + what + ".epilogue' has unknown value '" + epilogue + "'");
  mm.epilogue = *parsed;
  mm.a = SliceFrom(Get(v, "a", what), what + ".a");
  mm.b = SliceFrom(Get(v, "b", what), what + ".b");
  mm.d = SliceFrom(Get(v, "d", what), what + ".d");
  if (EpilogueHasBias(mm.epilogue)) mm.bias = SliceFrom(Get(v, "bias", what), what + ".bias");
  return mm;
}

ConvCall ConvFrom(const Json& v, const std::string& what) {
  ConvCall c;
  auto ints = [&](const char* key) { return IntsFrom(Get(v, key, what), what + "." + key); };
  c.dtype = DTypeFrom(Get(v, "dtype", what), what + ".dtype");
  c.input_dims = ints("input_dims");
  c.filter_dims = ints("filter_dims");
  c.output_dims = ints("output_dims");
  c.strides = ints("strides");
  c.padding_low = ints("padding_low");
  c.padding_high = ints("padding_high");
  c.dilations = ints("dilations");
  c.groups = AsInt(Get(v, "groups", what), what + ".groups");
  c.input = SliceFrom(Get(v, "input", what), what + ".input");
  c.filter = SliceFrom(Get(v, "filter", what), what + ".filter");
  c.output = SliceFrom(Get(v, "output", what), what + ".output");
  return c;
}

CollectiveCall CollectiveFrom(const Json& v, const std::string& what) {
  CollectiveCall c;
  const std::string& op = AsString(Get(v, "op", what), what + ".op");
  const auto parsed = ParseCollective(op);
  if (!parsed) throw ArtifactError("manifest: '" + what + ".op' has unknown value '" + op + "'");
  c.op = *parsed;
  c.dtype = DTypeFrom(Get(v, "dtype", what), what + ".dtype");
  if (c.op == Collective::kAllReduce || c.op == Collective::kReduceScatter) {
    const std::string& name = AsString(Get(v, "reduction", what), what + ".reduction");
    const auto reduction = ParseReduction(name);
    if (!reduction) {
      throw ArtifactError("manifest: '" + what + ".reduction' has unknown value '" + name + "'");
    }
    c.reduction = *reduction;
  }
  c.count = NonNegative(Get(v, "count", what), what + ".count");
  c.send = SliceFrom(Get(v, "send", what), what + ".send");
  c.receive = SliceFrom(Get(v, "receive", what), what + ".receive");
  if (c.op == Collective::kSendReceive) {
    for (const Json& pair : AsArray(Get(v, "pairs", what), what + ".pairs")) {
      const std::vector<int64_t> ends = IntsFrom(pair, what + ".pairs[]");
      if (ends.size() != 2) throw ArtifactError("manifest: '" + what + ".pairs[]' needs 2 ids");
      c.pairs.emplace_back(ends[0], ends[1]);
    }
  } else {
    for (const Json& group : AsArray(Get(v, "groups", what), what + ".groups"))
      c.groups.push_back(IntsFrom(group, what + ".groups[]"));
  }
  return c;
}

uint32_t ProgramIndex(const Json& v, const std::string& where) {
  const uint64_t index = NonNegative(v, where);
  if (index > std::numeric_limits<uint32_t>::max())
    throw ArtifactError("manifest: '" + where + "' is out of range");
  return static_cast<uint32_t>(index);
}

Step StepFrom(const Json& v, const std::string& w) {
  Step step;
  step.name = OptionalString(v, "name", w);
  const std::string& kind = AsString(Get(v, "kind", w), w + ".kind");
  if (kind == "kernel") {
    step.call = KernelFrom(v, w);
  } else if (kind == "cublaslt_matmul") {
    step.call = MatmulFrom(v, w);
  } else if (kind == "cudnn_conv") {
    step.call = ConvFrom(v, w);
  } else if (kind == "copy") {
    step.call = DeviceCopy{SliceFrom(Get(v, "source", w), w + ".source"),
                           SliceFrom(Get(v, "destination", w), w + ".destination")};
  } else if (kind == "while") {
    step.call = WhileLoop{ProgramIndex(Get(v, "condition", w), w + ".condition"),
                          ProgramIndex(Get(v, "body", w), w + ".body"),
                          SliceFrom(Get(v, "predicate", w), w + ".predicate")};
  } else if (kind == "conditional") {
    Conditional c;
    c.selector_dtype = DTypeFrom(Get(v, "selector_dtype", w), w + ".selector_dtype");
    c.selector = SliceFrom(Get(v, "selector", w), w + ".selector");
    const auto& branches = AsArray(Get(v, "branches", w), w + ".branches");
    for (size_t i = 0; i < branches.size(); ++i) {
      c.branches.push_back(ProgramIndex(branches[i], w + ".branches[" + std::to_string(i) + "]"));
    }
    step.call = std::move(c);
  } else if (kind == "strided_copy") {
    auto field = [&](const char* key) { return NonNegative(Get(v, key, w), w + "." + key); };
    step.call = StridedCopy{field("source"),    field("destination"),  field("rows"),
                            field("row_bytes"), field("source_pitch"), field("destination_pitch")};
  } else if (kind == "fill") {
    const uint64_t value = NonNegative(Get(v, "value", w), w + ".value");
    if (value > 255) throw ArtifactError("manifest: '" + w + ".value' is not a byte");
    step.call = Fill{SliceFrom(Get(v, "destination", w), w + ".destination"),
                     static_cast<uint8_t>(value)};
  } else if (kind == "device_id") {
    const std::string& id = AsString(Get(v, "id", w), w + ".id");
    if (id != "replica" && id != "partition")
      throw ArtifactError("manifest: '" + w + ".id' is neither replica nor partition");
    step.call = DeviceIdWrite{id == "partition",
                              SliceFrom(Get(v, "destination", w), w + ".destination")};
  } else if (kind == "collective") {
    step.call = CollectiveFrom(v, w);
  } else {
    throw ArtifactError("manifest: '" + w + ".kind' is unknown: '" + kind + "'");
  }
  return step;
}

}  // namespace

Json ManifestToJson(const Manifest& m) {
  Json o = {{"format", "rtgpu"},
            {"format_version", kArtifactFormatVersion},
            {"producer", m.producer},
            {"module_name", m.module_name},
            {"target_arch", m.target_arch},
            {"devices", {{"replicas", m.grid.replicas}, {"partitions", m.grid.partitions}}},
            {"arena_bytes", m.arena_bytes},
            {"workspace_bytes", m.workspace_bytes}};
  Json params = Json::array(), results = Json::array(), constants = Json::array();
  for (const auto& p : m.parameters) params.push_back(SlotJson(p));
  for (const auto& r : m.results) results.push_back(SlotJson(r));
  for (const auto& c : m.constants) {
    constants.push_back({{"section", c.section}, {"slice", SliceJson(c.slice)}});
  }
  o["parameters"] = std::move(params);
  o["results"] = std::move(results);
  o["constants"] = std::move(constants);
  Json modules = Json::array();
  for (const auto& mod : m.modules) {
    Json mo = {{"name", mod.name}, {"ptx_section", mod.ptx_section}};
    if (!mod.cubin_section.empty()) {
      mo["cubin_section"] = mod.cubin_section;
      mo["cubin_arch"] = mod.cubin_arch;
    }
    modules.push_back(std::move(mo));
  }
  o["modules"] = std::move(modules);
  o["steps"] = StepsJson(m.steps);
  Json programs = Json::array();
  for (const Program& p : m.programs) {
    programs.push_back({{"name", p.name}, {"steps", StepsJson(p.steps)}});
  }
  o["programs"] = std::move(programs);
  return o;
}

Manifest ManifestFromJson(const Json& json) {
  const std::string where = "manifest";
  if (AsString(Get(json, "format", where), "format") != "rtgpu") {
    throw ArtifactError("manifest: 'format' is not \"rtgpu\"");
  }
  const int64_t version = AsInt(Get(json, "format_version", where), "format_version");
  if (version != kArtifactFormatVersion) {
    throw ArtifactError("manifest says format version " + std::to_string(version) +
                        "; this runtime reads version " + std::to_string(kArtifactFormatVersion));
  }
  Manifest m;
  m.producer = OptionalString(json, "producer", where);
  m.module_name = OptionalString(json, "module_name", where);
  m.target_arch = AsString(Get(json, "target_arch", where), "target_arch");
  const Json& devices = Get(json, "devices", where);
  m.grid.replicas = AsInt(Get(devices, "replicas", "devices"), "devices.replicas");
  m.grid.partitions = AsInt(Get(devices, "partitions", "devices"), "devices.partitions");
  m.arena_bytes = NonNegative(Get(json, "arena_bytes", where), "arena_bytes");
  m.workspace_bytes = NonNegative(Get(json, "workspace_bytes", where), "workspace_bytes");
  auto each = [&](const char* key, auto&& fn) {
    const auto& items = AsArray(Get(json, key, where), key);
    for (size_t i = 0; i < items.size(); ++i)
      fn(items[i], std::string(key) + "[" + std::to_string(i) + "]");
  };
  each("parameters",
       [&](const Json& v, const std::string& w) { m.parameters.push_back(SlotFrom(v, w)); });
  each("results",
       [&](const Json& v, const std::string& w) { m.results.push_back(SlotFrom(v, w)); });
  each("constants", [&](const Json& v, const std::string& w) {
    m.constants.push_back(Constant{AsString(Get(v, "section", w), w + ".section"),
                                   SliceFrom(Get(v, "slice", w), w + ".slice")});
  });
  each("modules", [&](const Json& v, const std::string& w) {
    PtxModule mod;
    mod.name = AsString(Get(v, "name", w), w + ".name");
    mod.ptx_section = AsString(Get(v, "ptx_section", w), w + ".ptx_section");
    mod.cubin_section = OptionalString(v, "cubin_section", w);
    mod.cubin_arch = OptionalString(v, "cubin_arch", w);
    m.modules.push_back(std::move(mod));
  });
  each("steps", [&](const Json& v, const std::string& w) { m.steps.push_back(StepFrom(v, w)); });
  each("programs", [&](const Json& v, const std::string& w) {
    Program program;
    program.name = OptionalString(v, "name", w);
    const auto& steps = AsArray(Get(v, "steps", w), w + ".steps");
    for (size_t i = 0; i < steps.size(); ++i) {
      program.steps.push_back(StepFrom(steps[i], w + ".steps[" + std::to_string(i) + "]"));
    }
    m.programs.push_back(std::move(program));
  });
  return m;
}

}  // namespace gpu
