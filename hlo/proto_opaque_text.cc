// The text forms of the opaque attributes XLA has a proto field for, both ways: a small scanner
// for attribute values and, per attribute, Parse* (text -> XLA message) and *Text (message ->
// the text XLA prints). Parse* never throws: false means "not in a form we map", and the caller
// then keeps the text verbatim (proto_opaque.cc), so a parse gap costs interop, never data.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>

#include <google/protobuf/stubs/common.h>

#include "hlo/proto_internal.h"
#include "hlo/proto_text_scanner.h"

namespace hlo::proto_internal {
namespace {


// Protobuf refuses to parse `string` fields holding invalid UTF-8, so text whose decoded strings
// are not UTF-8 is not mapped to such fields (it stays verbatim in the extension). Protobuf's
// own check, so the two cannot disagree (overlong forms, surrogates).
bool IsValidUtf8(std::string_view text) {
  return text.size() < static_cast<size_t>(INT32_MAX) &&
         google::protobuf::internal::IsStructurallyValidUTF8(text.data(),
                                                             static_cast<int>(text.size()));
}

std::string JoinInts(const auto& values, std::string_view separator = ",") {
  std::string out;
  bool first = true;
  for (int64_t v : values) {
    if (!first) out += separator;
    out += std::to_string(v);
    first = false;
  }
  return out;
}

}  // namespace

// ----- metadata={op_type="..." op_name="..." source_file="..." source_line=N ...} ---------------

bool ParseMetadata(std::string_view text, xla::OpMetadata* m) {
  Scanner s(text);
  if (!s.Consume("{")) return false;
  while (!s.Consume("}")) {
    std::string key, str;
    int64_t number = 0;
    if (!s.ParseIdentifier(&key) || !s.Consume("=")) return false;
    bool is_string = s.Peek('"');
    if (is_string ? !s.ParseString(&str) : !s.ParseInt(&number)) return false;
    if (!IsValidUtf8(str)) return false;
    auto as_int32 = [&](void (xla::OpMetadata::*set)(int32_t)) {
      if (is_string || number < INT32_MIN || number > INT32_MAX) return false;
      (m->*set)(static_cast<int32_t>(number));
      return true;
    };
    bool ok = true;
    if (key == "op_type" && is_string) m->set_op_type(str);
    else if (key == "op_name" && is_string) m->set_op_name(str);
    else if (key == "source_file" && is_string) m->set_source_file(str);
    else if (key == "deduplicated_name" && is_string) m->set_deduplicated_name(str);
    else if (key == "scheduling_name" && is_string) m->set_scheduling_name(str);
    else if (key == "source_line") ok = as_int32(&xla::OpMetadata::set_source_line);
    else if (key == "source_end_line") ok = as_int32(&xla::OpMetadata::set_source_end_line);
    else if (key == "source_column") ok = as_int32(&xla::OpMetadata::set_source_column);
    else if (key == "source_end_column") ok = as_int32(&xla::OpMetadata::set_source_end_column);
    else if (key == "stack_frame_id") ok = as_int32(&xla::OpMetadata::set_stack_frame_id);
    else return false;  // a key XLA's OpMetadata has no field for
    if (!ok) return false;
  }
  return s.Finished();
}

std::string MetadataText(const xla::OpMetadata& m) {
  std::vector<std::string> parts;
  auto add_string = [&](const char* key, const std::string& v) {
    if (!v.empty()) parts.push_back(std::string(key) + "=" + QuoteString(v));
  };
  auto add_int = [&](const char* key, int64_t v) {
    if (v != 0) parts.push_back(std::string(key) + "=" + std::to_string(v));
  };
  add_string("op_type", m.op_type());
  add_string("op_name", m.op_name());
  add_string("source_file", m.source_file());
  add_int("source_line", m.source_line());
  add_int("source_end_line", m.source_end_line());
  add_int("source_column", m.source_column());
  add_int("source_end_column", m.source_end_column());
  add_string("deduplicated_name", m.deduplicated_name());
  add_int("stack_frame_id", m.stack_frame_id());
  add_string("scheduling_name", m.scheduling_name());
  std::string out = "{";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? " " : "") + parts[i];
  return out + "}";
}

// ----- sharding -----------------------------------------------------------------------------------

namespace {

bool ParseSingleSharding(Scanner& s, xla::OpSharding* sharding) {
  if (!s.Consume("{")) return false;
  if (s.Consume("replicated")) {
    sharding->set_type(xla::OpSharding::REPLICATED);
  } else if (s.Consume("manual")) {
    sharding->set_type(xla::OpSharding::MANUAL);
  } else if (s.Consume("maximal")) {
    int64_t device;
    if (!s.Consume("device=") || !s.ParseInt(&device)) return false;
    sharding->set_type(xla::OpSharding::MAXIMAL);
    sharding->add_tile_assignment_dimensions(1);
    sharding->add_tile_assignment_devices(device);
  } else if (s.Consume("devices=")) {
    std::vector<int64_t> dims, values;
    if (!s.ParseIntList('[', ']', &dims)) return false;
    sharding->set_type(xla::OpSharding::OTHER);
    for (int64_t d : dims) sharding->add_tile_assignment_dimensions(d);
    if (s.Consume("<=")) {
      // Iota tile assignment: reshape iota(n) to `values`, optionally transpose by T(perm).
      if (!s.ParseIntList('[', ']', &values)) return false;
      for (int64_t d : values) sharding->add_iota_reshape_dims(d);
      std::vector<int64_t> perm;
      if (s.Consume("T")) {
        if (!s.ParseIntList('(', ')', &perm)) return false;
      } else {
        for (size_t i = 0; i < values.size(); ++i) perm.push_back(static_cast<int64_t>(i));
      }
      for (int64_t p : perm) sharding->add_iota_transpose_perm(static_cast<int32_t>(p));
    } else {
      do {
        int64_t device;
        if (!s.ParseInt(&device)) return false;
        sharding->add_tile_assignment_devices(device);
      } while (s.Consume(","));
    }
    if (s.Consume("last_tile_dim_replicate")) sharding->set_replicate_on_last_tile_dim(true);
  } else {
    return false;
  }
  return s.Consume("}");
}

}  // namespace

bool ParseSharding(std::string_view text, xla::OpSharding* sharding) {
  Scanner s(text);
  bool ok;
  if (text.size() > 1 && text[0] == '{' && Scanner(text.substr(1)).Peek('{')) {
    s.Consume("{");
    sharding->set_type(xla::OpSharding::TUPLE);
    ok = true;
    if (!s.Peek('}')) {
      do {
        ok = ParseSingleSharding(s, sharding->add_tuple_shardings());
      } while (ok && s.Consume(","));
    }
    ok = ok && s.Consume("}");
  } else {
    ok = ParseSingleSharding(s, sharding);
  }
  return ok && s.Finished();
}

namespace {

std::string SingleShardingText(const xla::OpSharding& s) {
  switch (s.type()) {
    case xla::OpSharding::REPLICATED: return "{replicated}";
    case xla::OpSharding::MANUAL: return "{manual}";
    case xla::OpSharding::MAXIMAL:
      return "{maximal device=" +
             std::to_string(s.tile_assignment_devices_size() ? s.tile_assignment_devices(0) : 0) +
             "}";
    case xla::OpSharding::OTHER: {
      std::string out = "{devices=[" + JoinInts(s.tile_assignment_dimensions()) + "]";
      if (s.iota_reshape_dims_size() > 0) {
        out += "<=[" + JoinInts(s.iota_reshape_dims()) + "]";
        bool identity = true;
        for (int i = 0; i < s.iota_transpose_perm_size(); ++i) {
          identity = identity && s.iota_transpose_perm(i) == i;
        }
        if (!identity) out += "T(" + JoinInts(s.iota_transpose_perm()) + ")";
      } else {
        out += JoinInts(s.tile_assignment_devices());
      }
      if (s.replicate_on_last_tile_dim()) out += " last_tile_dim_replicate";
      return out + "}";
    }
    case xla::OpSharding::TUPLE:
    case xla::OpSharding::UNKNOWN:
    default: return "{unknown}";
  }
}

}  // namespace

std::string ShardingText(const xla::OpSharding& s) {
  if (s.type() != xla::OpSharding::TUPLE) return SingleShardingText(s);
  std::string out = "{";
  for (int i = 0; i < s.tuple_shardings_size(); ++i) {
    if (i > 0) out += ", ";
    if (i > 0 && i % 5 == 0) out += "/*index=" + std::to_string(i) + "*/";  // as XLA prints it
    out += SingleShardingText(s.tuple_shardings(i));
  }
  return out + "}";
}

// ----- backend_config and frontend_attributes -----------------------------------------------------

// backend_config is printed raw when it is JSON-like (`{...}`), quoted otherwise.
std::string DecodeBackendConfig(std::string_view text) {
  if (!text.empty() && text[0] == '"') {
    Scanner s(text);
    std::string decoded;
    if (s.ParseString(&decoded) && s.Finished()) return decoded;
  }
  return std::string(text);
}
std::string BackendConfigText(const std::string& decoded) {
  if (decoded.empty() || decoded[0] == '{') return decoded;
  return QuoteString(decoded);
}

bool ParseFrontendAttributes(std::string_view text, xla::FrontendAttributes* attributes) {
  Scanner s(text);
  if (!s.Consume("{")) return false;
  if (!s.Consume("}")) {
    do {
      std::string key, value;
      if (!(s.Peek('"') ? s.ParseString(&key) : s.ParseIdentifier(&key))) return false;
      if (!s.Consume("=") || !s.ParseString(&value)) return false;
      if (!IsValidUtf8(key) || !IsValidUtf8(value)) return false;
      (*attributes->mutable_map())[key] = value;
    } while (s.Consume(","));
    if (!s.Consume("}")) return false;
  }
  return s.Finished();
}

std::string FrontendAttributesText(const xla::FrontendAttributes& attributes) {
  // Protobuf maps iterate in no fixed order; XLA prints keys sorted.
  std::map<std::string, std::string> sorted(attributes.map().begin(), attributes.map().end());
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : sorted) {
    out += (first ? "" : ",") + key + "=" + QuoteString(value);
    first = false;
  }
  return out + "}";
}

// ----- input_output_alias={ {0}: (17, {}, may-alias), ... } ---------------------------------------

bool ParseInputOutputAlias(std::string_view text, xla::HloInputOutputAliasProto* alias) {
  Scanner s(text);
  if (!s.Consume("{")) return false;
  if (!s.Consume("}")) {
    do {
      auto* entry = alias->add_entries();
      std::vector<int64_t> output_index, parameter_index;
      int64_t parameter;
      if (!s.ParseIntList('{', '}', &output_index) || !s.Consume(":") || !s.Consume("(") ||
          !s.ParseInt(&parameter) || !s.Consume(",") ||
          !s.ParseIntList('{', '}', &parameter_index)) {
        return false;
      }
      for (int64_t i : output_index) entry->add_output_shape_index(i);
      for (int64_t i : parameter_index) entry->add_parameter_shape_index(i);
      entry->set_parameter_number(parameter);
      entry->set_kind(xla::HloInputOutputAliasProto::MAY_ALIAS);
      if (s.Consume(",")) {
        if (s.Consume("must-alias")) entry->set_kind(xla::HloInputOutputAliasProto::MUST_ALIAS);
        else if (!s.Consume("may-alias")) return false;
      }
      if (!s.Consume(")")) return false;
    } while (s.Consume(","));
    if (!s.Consume("}")) return false;
  }
  return s.Finished();
}

std::string InputOutputAliasText(const xla::HloInputOutputAliasProto& alias) {
  std::string out = "{ ";
  for (int i = 0; i < alias.entries_size(); ++i) {
    const auto& e = alias.entries(i);
    out += (i ? ", {" : "{") + JoinInts(e.output_shape_index()) + "}: (" +
           std::to_string(e.parameter_number()) + ", {" + JoinInts(e.parameter_shape_index()) +
           "}, " + (e.kind() == xla::HloInputOutputAliasProto::MUST_ALIAS ? "must-alias" : "may-alias") +
           ")";
  }
  return out + " }";
}

std::string QuoteString(std::string_view raw) {
  static const char kOctal[] = "01234567";
  std::string out = "\"";
  for (char c : raw) {
    unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\'': out += "\\'"; break;
      default:
        if (u < 0x20 || u >= 0x7f) {
          out += '\\';
          out += kOctal[(u >> 6) & 7];
          out += kOctal[(u >> 3) & 7];
          out += kOctal[u & 7];
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace hlo::proto_internal
