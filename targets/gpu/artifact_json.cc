// The manifest's JSON reading rules over nlohmann-json (see artifact_json.h for what they
// guarantee).
#include "targets/gpu/artifact_json.h"

#include <limits>
#include <optional>
#include <set>
#include <vector>

namespace gpu {
namespace {

const char* KindName(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number";
    case Json::value_t::string: return "a string";
    case Json::value_t::array: return "an array";
    case Json::value_t::object: return "an object";
    case Json::value_t::binary:
    case Json::value_t::discarded: break;
  }
  return "?";
}

[[noreturn]] void WrongKind(std::string_view what, const char* expected, const Json& got) {
  throw ArtifactError("manifest: '" + std::string(what) + "' must be " + expected + ", not " +
                      KindName(got));
}

}  // namespace

Json ParseJson(std::string_view text) {
  // nlohmann-json keeps the last of two equal member names; a manifest that names a member twice
  // is refused instead. One frame per open container: the member names of an object, none for
  // an array.
  std::vector<std::optional<std::set<std::string>>> open;
  const Json::parser_callback_t check = [&open](int depth, Json::parse_event_t event,
                                                Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (depth >= kMaxJsonDepth) {
          throw ArtifactError("manifest JSON: nesting deeper than " +
                              std::to_string(kMaxJsonDepth));
        }
        open.emplace_back();
        if (event == Json::parse_event_t::object_start) open.back().emplace();
        break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end: open.pop_back(); break;
      case Json::parse_event_t::key:
        if (!open.back()->insert(parsed.get<std::string>()).second) {
          throw ArtifactError("manifest JSON: duplicate member '" + parsed.get<std::string>() +
                              "'");
        }
        break;
      case Json::parse_event_t::value: break;
    }
    return true;
  };
  try {
    return Json::parse(text, check);
  } catch (const Json::parse_error& error) {
    // nlohmann's message starts with the position ("[json.exception.parse_error.101] parse
    // error at line 1, column 9: "); the byte offset stands for it, and the reason after the
    // first ": " is kept whole (it may quote the text last read, colons included).
    std::string reason = error.what();
    if (size_t colon = reason.find(": "); colon != std::string::npos) {
      reason = reason.substr(colon + 2);
    }
    throw ArtifactError("manifest JSON at byte " + std::to_string(error.byte) + ": " + reason);
  }
}

std::string JsonText(const Json& document) {
  return document.dump(2, ' ', false, Json::error_handler_t::replace);
}

bool AsBool(const Json& value, std::string_view what) {
  if (!value.is_boolean()) WrongKind(what, "a boolean", value);
  return value.get<bool>();
}

int64_t AsInt(const Json& value, std::string_view what) {
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    throw ArtifactError("manifest: '" + std::string(what) + "' does not fit in 64 bits");
  }
  if (!value.is_number_integer()) WrongKind(what, "an integer", value);
  return value.get<int64_t>();
}

double AsDouble(const Json& value, std::string_view what) {
  if (!value.is_number()) WrongKind(what, "a number", value);
  return value.get<double>();
}

const std::string& AsString(const Json& value, std::string_view what) {
  if (!value.is_string()) WrongKind(what, "a string", value);
  return value.get_ref<const std::string&>();
}

const Json::array_t& AsArray(const Json& value, std::string_view what) {
  if (!value.is_array()) WrongKind(what, "an array", value);
  return value.get_ref<const Json::array_t&>();
}

const Json* Find(const Json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

const Json& Get(const Json& object, std::string_view key, std::string_view where) {
  if (!object.is_object()) WrongKind(where, "an object", object);
  const Json* member = Find(object, key);
  if (member == nullptr) {
    throw ArtifactError("manifest: '" + std::string(where) + "' lacks member '" +
                        std::string(key) + "'");
  }
  return *member;
}

}  // namespace gpu
