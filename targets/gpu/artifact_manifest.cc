// Manifest <-> JSON. Field names here are the documented format (docs/gpu-runtime.md); the
// reader rejects unknown step kinds, dtypes and epilogues by name, and leaves range checks to
// ValidateArtifact (artifact_validate.cc).
#include <limits>

#include "targets/gpu/artifact.h"

namespace gpu {
namespace {

JsonValue IntArray(const std::vector<int64_t>& values) {
  JsonValue a = JsonValue::Array();
  for (int64_t v : values) a.Push(JsonValue::Int(v));
  return a;
}
JsonValue Dim3(const std::array<uint32_t, 3>& d) {
  return IntArray({int64_t{d[0]}, int64_t{d[1]}, int64_t{d[2]}});
}
JsonValue SliceJson(const Slice& s) {
  JsonValue o = JsonValue::Object();
  o.Set("offset", JsonValue::Int(static_cast<int64_t>(s.offset)));
  o.Set("bytes", JsonValue::Int(static_cast<int64_t>(s.bytes)));
  return o;
}
JsonValue SlotJson(const TensorSlot& t) {
  JsonValue o = JsonValue::Object();
  o.Set("name", JsonValue::String(t.name));
  o.Set("dtype", JsonValue::String(DTypeName(t.dtype)));
  o.Set("shape", IntArray(t.shape));
  o.Set("slice", SliceJson(t.slice));
  return o;
}

struct StepWriter {
  JsonValue& o;
  void operator()(const KernelLaunch& k) const {
    o.Set("module", JsonValue::String(k.module));
    o.Set("entry", JsonValue::String(k.entry));
    o.Set("grid", Dim3(k.grid));
    o.Set("block", Dim3(k.block));
    o.Set("shared_bytes", JsonValue::Int(k.shared_bytes));
    JsonValue args = JsonValue::Array();
    for (const KernelArg& a : k.args) {
      JsonValue arg = JsonValue::Object();
      switch (a.kind) {
        case KernelArg::Kind::kBuffer: arg.Set("buffer", SliceJson(a.slice)); break;
        case KernelArg::Kind::kS32: arg.Set("s32", JsonValue::Int(a.integer)); break;
        case KernelArg::Kind::kS64: arg.Set("s64", JsonValue::Int(a.integer)); break;
        case KernelArg::Kind::kF32: arg.Set("f32", JsonValue::Double(a.real)); break;
      }
      args.Push(std::move(arg));
    }
    o.Set("args", std::move(args));
  }
  void operator()(const MatmulCall& mm) const {
    o.Set("dtype", JsonValue::String(DTypeName(mm.dtype)));
    o.Set("allow_tf32", JsonValue::Bool(mm.allow_tf32));
    o.Set("m", JsonValue::Int(mm.m));
    o.Set("n", JsonValue::Int(mm.n));
    o.Set("k", JsonValue::Int(mm.k));
    o.Set("batch", JsonValue::Int(mm.batch));
    o.Set("transpose_a", JsonValue::Bool(mm.transpose_a));
    o.Set("transpose_b", JsonValue::Bool(mm.transpose_b));
    o.Set("lda", JsonValue::Int(mm.lda));
    o.Set("ldb", JsonValue::Int(mm.ldb));
    o.Set("ldd", JsonValue::Int(mm.ldd));
    o.Set("stride_a", JsonValue::Int(mm.stride_a));
    o.Set("stride_b", JsonValue::Int(mm.stride_b));
    o.Set("stride_d", JsonValue::Int(mm.stride_d));
    o.Set("alpha", JsonValue::Double(mm.alpha));
    o.Set("beta", JsonValue::Double(mm.beta));
    o.Set("epilogue", JsonValue::String(EpilogueName(mm.epilogue)));
    o.Set("a", SliceJson(mm.a));
    o.Set("b", SliceJson(mm.b));
    o.Set("d", SliceJson(mm.d));
    if (EpilogueHasBias(mm.epilogue)) o.Set("bias", SliceJson(mm.bias));
  }
  void operator()(const ConvCall& c) const {
    o.Set("dtype", JsonValue::String(DTypeName(c.dtype)));
    o.Set("input_dims", IntArray(c.input_dims));
    o.Set("filter_dims", IntArray(c.filter_dims));
    o.Set("output_dims", IntArray(c.output_dims));
    o.Set("strides", IntArray(c.strides));
    o.Set("padding_low", IntArray(c.padding_low));
    o.Set("padding_high", IntArray(c.padding_high));
    o.Set("dilations", IntArray(c.dilations));
    o.Set("groups", JsonValue::Int(c.groups));
    o.Set("input", SliceJson(c.input));
    o.Set("filter", SliceJson(c.filter));
    o.Set("output", SliceJson(c.output));
  }
  void operator()(const DeviceCopy& c) const {
    o.Set("source", SliceJson(c.source));
    o.Set("destination", SliceJson(c.destination));
  }
  void operator()(const WhileLoop& w) const {
    o.Set("condition", JsonValue::Int(w.condition));
    o.Set("body", JsonValue::Int(w.body));
    o.Set("predicate", SliceJson(w.predicate));
  }
  void operator()(const Conditional& c) const {
    o.Set("selector_dtype", JsonValue::String(DTypeName(c.selector_dtype)));
    o.Set("selector", SliceJson(c.selector));
    JsonValue branches = JsonValue::Array();
    for (uint32_t b : c.branches) branches.Push(JsonValue::Int(b));
    o.Set("branches", std::move(branches));
  }
};

JsonValue StepsJson(const std::vector<Step>& steps) {
  JsonValue list = JsonValue::Array();
  for (const Step& s : steps) {
    JsonValue so = JsonValue::Object();
    so.Set("kind", JsonValue::String(StepKindName(s)));
    so.Set("name", JsonValue::String(s.name));
    std::visit(StepWriter{so}, s.call);
    list.Push(std::move(so));
  }
  return list;
}

// ---- reading ----

uint64_t NonNegative(const JsonValue& v, const std::string& what) {
  const int64_t i = v.AsInt(what);
  if (i < 0) throw ArtifactError("manifest: '" + what + "' is negative (" + std::to_string(i) + ")");
  return static_cast<uint64_t>(i);
}
Slice SliceFrom(const JsonValue& v, const std::string& what) {
  return Slice{NonNegative(v.Get("offset", what), what + ".offset"),
               NonNegative(v.Get("bytes", what), what + ".bytes")};
}
std::vector<int64_t> IntsFrom(const JsonValue& v, const std::string& what) {
  std::vector<int64_t> out;
  for (const JsonValue& item : v.AsArray(what)) out.push_back(item.AsInt(what + "[]"));
  return out;
}
std::array<uint32_t, 3> Dim3From(const JsonValue& v, const std::string& what) {
  const std::vector<int64_t> d = IntsFrom(v, what);
  if (d.size() != 3) throw ArtifactError("manifest: '" + what + "' must have 3 entries");
  std::array<uint32_t, 3> out{};
  for (int i = 0; i < 3; ++i) {
    if (d[i] < 1 || d[i] > std::numeric_limits<uint32_t>::max()) {
      throw ArtifactError("manifest: '" + what + "' entry " + std::to_string(d[i]) + " out of range");
    }
    out[i] = static_cast<uint32_t>(d[i]);
  }
  return out;
}
DType DTypeFrom(const JsonValue& v, const std::string& what) {
  const std::string& name = v.AsString(what);
  if (auto d = ParseDType(name)) return *d;
  throw ArtifactError("manifest: '" + what + "' has unknown dtype '" + name + "'");
}
std::string OptionalString(const JsonValue& o, const char* key, const std::string& what) {
  const JsonValue* v = o.Find(key);
  return v == nullptr ? std::string() : v->AsString(what + "." + key);
}
TensorSlot SlotFrom(const JsonValue& v, const std::string& what) {
  TensorSlot t;
  t.name = v.Get("name", what).AsString(what + ".name");
  t.dtype = DTypeFrom(v.Get("dtype", what), what + ".dtype");
  t.shape = IntsFrom(v.Get("shape", what), what + ".shape");
  t.slice = SliceFrom(v.Get("slice", what), what + ".slice");
  return t;
}

KernelLaunch KernelFrom(const JsonValue& v, const std::string& what) {
  KernelLaunch k;
  k.module = v.Get("module", what).AsString(what + ".module");
  k.entry = v.Get("entry", what).AsString(what + ".entry");
  k.grid = Dim3From(v.Get("grid", what), what + ".grid");
  k.block = Dim3From(v.Get("block", what), what + ".block");
  const uint64_t shared = NonNegative(v.Get("shared_bytes", what), what + ".shared_bytes");
  if (shared > std::numeric_limits<uint32_t>::max()) throw ArtifactError("manifest: " + what + ".shared_bytes too large");
  k.shared_bytes = static_cast<uint32_t>(shared);
  for (const JsonValue& a : v.Get("args", what).AsArray(what + ".args")) {
    const std::string arg_what = what + ".args[" + std::to_string(k.args.size()) + "]";
    KernelArg arg;
    if (const JsonValue* b = a.Find("buffer")) {
      arg.kind = KernelArg::Kind::kBuffer;
      arg.slice = SliceFrom(*b, arg_what + ".buffer");
    } else if (const JsonValue* i32 = a.Find("s32")) {
      arg.kind = KernelArg::Kind::kS32;
      arg.integer = i32->AsInt(arg_what + ".s32");
    } else if (const JsonValue* i64 = a.Find("s64")) {
      arg.kind = KernelArg::Kind::kS64;
      arg.integer = i64->AsInt(arg_what + ".s64");
    } else if (const JsonValue* f = a.Find("f32")) {
      arg.kind = KernelArg::Kind::kF32;
      arg.real = f->AsDouble(arg_what + ".f32");
    } else {
      throw ArtifactError("manifest: '" + arg_what + "' must be one of buffer, s32, s64, f32");
    }
    k.args.push_back(arg);
  }
  return k;
}

MatmulCall MatmulFrom(const JsonValue& v, const std::string& what) {
  MatmulCall mm;
  auto integer = [&](const char* key) { return v.Get(key, what).AsInt(what + "." + key); };
  auto flag = [&](const char* key) { return v.Get(key, what).AsBool(what + "." + key); };
  mm.dtype = DTypeFrom(v.Get("dtype", what), what + ".dtype");
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
  mm.alpha = v.Get("alpha", what).AsDouble(what + ".alpha");
  mm.beta = v.Get("beta", what).AsDouble(what + ".beta");
  const std::string& epilogue = v.Get("epilogue", what).AsString(what + ".epilogue");
  const auto parsed = ParseEpilogue(epilogue);
  if (!parsed) throw ArtifactError("manifest: '" + what + ".epilogue' has unknown value '" + epilogue + "'");
  mm.epilogue = *parsed;
  mm.a = SliceFrom(v.Get("a", what), what + ".a");
  mm.b = SliceFrom(v.Get("b", what), what + ".b");
  mm.d = SliceFrom(v.Get("d", what), what + ".d");
  if (EpilogueHasBias(mm.epilogue)) mm.bias = SliceFrom(v.Get("bias", what), what + ".bias");
  return mm;
}

ConvCall ConvFrom(const JsonValue& v, const std::string& what) {
  ConvCall c;
  auto ints = [&](const char* key) { return IntsFrom(v.Get(key, what), what + "." + key); };
  c.dtype = DTypeFrom(v.Get("dtype", what), what + ".dtype");
  c.input_dims = ints("input_dims");
  c.filter_dims = ints("filter_dims");
  c.output_dims = ints("output_dims");
  c.strides = ints("strides");
  c.padding_low = ints("padding_low");
  c.padding_high = ints("padding_high");
  c.dilations = ints("dilations");
  c.groups = v.Get("groups", what).AsInt(what + ".groups");
  c.input = SliceFrom(v.Get("input", what), what + ".input");
  c.filter = SliceFrom(v.Get("filter", what), what + ".filter");
  c.output = SliceFrom(v.Get("output", what), what + ".output");
  return c;
}

uint32_t ProgramIndex(const JsonValue& v, const std::string& where) {
  const uint64_t index = NonNegative(v, where);
  if (index > std::numeric_limits<uint32_t>::max()) throw ArtifactError("manifest: '" + where + "' is out of range");
  return static_cast<uint32_t>(index);
}

Step StepFrom(const JsonValue& v, const std::string& w) {
  Step step;
  step.name = OptionalString(v, "name", w);
  const std::string& kind = v.Get("kind", w).AsString(w + ".kind");
  if (kind == "kernel") step.call = KernelFrom(v, w);
  else if (kind == "cublaslt_matmul") step.call = MatmulFrom(v, w);
  else if (kind == "cudnn_conv") step.call = ConvFrom(v, w);
  else if (kind == "copy") step.call = DeviceCopy{SliceFrom(v.Get("source", w), w + ".source"), SliceFrom(v.Get("destination", w), w + ".destination")};
  else if (kind == "while") {
    step.call = WhileLoop{ProgramIndex(v.Get("condition", w), w + ".condition"),
                          ProgramIndex(v.Get("body", w), w + ".body"),
                          SliceFrom(v.Get("predicate", w), w + ".predicate")};
  } else if (kind == "conditional") {
    Conditional c;
    c.selector_dtype = DTypeFrom(v.Get("selector_dtype", w), w + ".selector_dtype");
    c.selector = SliceFrom(v.Get("selector", w), w + ".selector");
    const auto& branches = v.Get("branches", w).AsArray(w + ".branches");
    for (size_t i = 0; i < branches.size(); ++i) {
      c.branches.push_back(ProgramIndex(branches[i], w + ".branches[" + std::to_string(i) + "]"));
    }
    step.call = std::move(c);
  } else {
    throw ArtifactError("manifest: '" + w + ".kind' is unknown: '" + kind + "'");
  }
  return step;
}

}  // namespace

JsonValue ManifestToJson(const Manifest& m) {
  JsonValue o = JsonValue::Object();
  o.Set("format", JsonValue::String("rtgpu"));
  o.Set("format_version", JsonValue::Int(kArtifactFormatVersion));
  o.Set("producer", JsonValue::String(m.producer));
  o.Set("module_name", JsonValue::String(m.module_name));
  o.Set("target_arch", JsonValue::String(m.target_arch));
  o.Set("arena_bytes", JsonValue::Int(static_cast<int64_t>(m.arena_bytes)));
  o.Set("workspace_bytes", JsonValue::Int(static_cast<int64_t>(m.workspace_bytes)));
  JsonValue params = JsonValue::Array(), results = JsonValue::Array(), constants = JsonValue::Array();
  for (const auto& p : m.parameters) params.Push(SlotJson(p));
  for (const auto& r : m.results) results.Push(SlotJson(r));
  for (const auto& c : m.constants) {
    JsonValue co = JsonValue::Object();
    co.Set("section", JsonValue::String(c.section));
    co.Set("slice", SliceJson(c.slice));
    constants.Push(std::move(co));
  }
  o.Set("parameters", std::move(params));
  o.Set("results", std::move(results));
  o.Set("constants", std::move(constants));
  JsonValue modules = JsonValue::Array();
  for (const auto& mod : m.modules) {
    JsonValue mo = JsonValue::Object();
    mo.Set("name", JsonValue::String(mod.name));
    mo.Set("ptx_section", JsonValue::String(mod.ptx_section));
    if (!mod.cubin_section.empty()) {
      mo.Set("cubin_section", JsonValue::String(mod.cubin_section));
      mo.Set("cubin_arch", JsonValue::String(mod.cubin_arch));
    }
    modules.Push(std::move(mo));
  }
  o.Set("modules", std::move(modules));
  o.Set("steps", StepsJson(m.steps));
  JsonValue programs = JsonValue::Array();
  for (const Program& p : m.programs) {
    JsonValue po = JsonValue::Object();
    po.Set("name", JsonValue::String(p.name));
    po.Set("steps", StepsJson(p.steps));
    programs.Push(std::move(po));
  }
  o.Set("programs", std::move(programs));
  return o;
}

Manifest ManifestFromJson(const JsonValue& json) {
  const std::string where = "manifest";
  if (json.Get("format", where).AsString("format") != "rtgpu") {
    throw ArtifactError("manifest: 'format' is not \"rtgpu\"");
  }
  const int64_t version = json.Get("format_version", where).AsInt("format_version");
  if (version != kArtifactFormatVersion) {
    throw ArtifactError("manifest says format version " + std::to_string(version) + "; this runtime reads version " +
                        std::to_string(kArtifactFormatVersion));
  }
  Manifest m;
  m.producer = OptionalString(json, "producer", where);
  m.module_name = OptionalString(json, "module_name", where);
  m.target_arch = json.Get("target_arch", where).AsString("target_arch");
  m.arena_bytes = NonNegative(json.Get("arena_bytes", where), "arena_bytes");
  m.workspace_bytes = NonNegative(json.Get("workspace_bytes", where), "workspace_bytes");
  auto each = [&](const char* key, auto&& fn) {
    const auto& items = json.Get(key, where).AsArray(key);
    for (size_t i = 0; i < items.size(); ++i) fn(items[i], std::string(key) + "[" + std::to_string(i) + "]");
  };
  each("parameters", [&](const JsonValue& v, const std::string& w) { m.parameters.push_back(SlotFrom(v, w)); });
  each("results", [&](const JsonValue& v, const std::string& w) { m.results.push_back(SlotFrom(v, w)); });
  each("constants", [&](const JsonValue& v, const std::string& w) {
    m.constants.push_back(Constant{v.Get("section", w).AsString(w + ".section"), SliceFrom(v.Get("slice", w), w + ".slice")});
  });
  each("modules", [&](const JsonValue& v, const std::string& w) {
    PtxModule mod;
    mod.name = v.Get("name", w).AsString(w + ".name");
    mod.ptx_section = v.Get("ptx_section", w).AsString(w + ".ptx_section");
    mod.cubin_section = OptionalString(v, "cubin_section", w);
    mod.cubin_arch = OptionalString(v, "cubin_arch", w);
    m.modules.push_back(std::move(mod));
  });
  each("steps", [&](const JsonValue& v, const std::string& w) { m.steps.push_back(StepFrom(v, w)); });
  each("programs", [&](const JsonValue& v, const std::string& w) {
    Program program;
    program.name = OptionalString(v, "name", w);
    const auto& steps = v.Get("steps", w).AsArray(w + ".steps");
    for (size_t i = 0; i < steps.size(); ++i) {
      program.steps.push_back(StepFrom(steps[i], w + ".steps[" + std::to_string(i) + "]"));
    }
    m.programs.push_back(std::move(program));
  });
  return m;
}

}  // namespace gpu
