// Opaque text attributes <-> XLA's typed proto fields, with a lossless Retarget extension.
//
// The IR keeps attributes it does not interpret as raw text (OpaqueAttribute). For interop, the
// ones XLA has a field for are parsed into that field: metadata -> OpMetadata, sharding ->
// OpSharding ({replicated}, {manual}, {maximal device=N}, {devices=[..]ids} and
// {devices=[..]<=[..]T(..)}, last_tile_dim_replicate, tuples of these), backend_config ->
// backend_config, frontend_attributes -> FrontendAttributes; in the module header
// input_output_alias -> HloInputOutputAliasProto and frontend_attributes -> FrontendAttributes.
//
// Losslessness: every opaque attribute is also listed, in order, in the Retarget extension
// (field 50000, which XLA ignores). An entry carries the verbatim text unless regenerating the
// text from the XLA field gives back exactly the same string. Reading our own protos therefore
// reproduces the IR exactly; reading XLA's protos (no extension) generates the text from XLA's
// fields. Attributes XLA has no field for (operand_layout_constraints, num_partitions, ...)
// survive only in the extension: XLA does not see them.
#include <optional>

#include "hlo/proto_internal.h"

namespace hlo::proto_internal {
namespace {

// ----- the extension list -------------------------------------------------------------------------

// Appends one entry; the verbatim value is kept unless `regenerated` reproduces it.
void Record(const OpaqueAttribute& a, const std::optional<std::string>& regenerated,
            google::protobuf::RepeatedPtrField<xla::RetargetOpaqueAttribute>* list) {
  xla::RetargetOpaqueAttribute* entry = list->Add();
  entry->set_name(a.name);
  if (!regenerated || *regenerated != a.value) entry->set_value(a.value);
}

// Tries `parse` into a scratch message; on success installs it into `target` (first use of the
// field only) and returns the text regenerated from it.
template <typename Message, typename Parse, typename Text>
std::optional<std::string> MapInto(const std::string& value, bool* used, Message* target,
                                   Parse parse, Text text) {
  if (*used) return std::nullopt;
  Message scratch;
  if (!parse(value, &scratch)) return std::nullopt;
  *used = true;
  target->CopyFrom(scratch);
  return text(*target);
}

}  // namespace

void OpaqueAttributesToProto(const std::vector<OpaqueAttribute>& attributes,
                             xla::HloInstructionProto* proto) {
  bool metadata_used = false, sharding_used = false, frontend_used = false, backend_used = false;
  auto* list = proto->mutable_retarget_opaque_attributes();
  for (const OpaqueAttribute& a : attributes) {
    std::optional<std::string> regenerated;
    if (a.name == "metadata") {
      regenerated = MapInto(a.value, &metadata_used, proto->mutable_metadata(), ParseMetadata,
                            MetadataText);
    } else if (a.name == "sharding") {
      regenerated = MapInto(a.value, &sharding_used, proto->mutable_sharding(), ParseSharding,
                            ShardingText);
    } else if (a.name == "frontend_attributes") {
      regenerated = MapInto(a.value, &frontend_used, proto->mutable_frontend_attributes(),
                            ParseFrontendAttributes, FrontendAttributesText);
    } else if (a.name == "backend_config" && !backend_used && proto->backend_config().empty()) {
      backend_used = true;
      proto->set_backend_config(DecodeBackendConfig(a.value));
      regenerated = BackendConfigText(proto->backend_config());
    }
    Record(a, regenerated, list);
  }
  // A sharding or metadata that did not parse leaves no half-filled XLA message behind.
  if (!metadata_used) proto->clear_metadata();
  if (!sharding_used) proto->clear_sharding();
  if (!frontend_used) proto->clear_frontend_attributes();
}

std::vector<OpaqueAttribute> OpaqueAttributesFromProto(const xla::HloInstructionProto& proto) {
  std::vector<OpaqueAttribute> out;
  if (proto.retarget_opaque_attributes_size() > 0) {
    for (const auto& entry : proto.retarget_opaque_attributes()) {
      if (entry.has_value()) {
        out.push_back({entry.name(), entry.value()});
      } else if (entry.name() == "metadata") {
        out.push_back({entry.name(), MetadataText(proto.metadata())});
      } else if (entry.name() == "sharding") {
        out.push_back({entry.name(), ShardingText(proto.sharding())});
      } else if (entry.name() == "frontend_attributes") {
        out.push_back({entry.name(), FrontendAttributesText(proto.frontend_attributes())});
      } else if (entry.name() == "backend_config") {
        out.push_back({entry.name(), BackendConfigText(proto.backend_config())});
      }
    }
    return out;
  }
  // Written by XLA: generate the text from the fields that are set, in XLA's print order.
  if (proto.has_sharding()) out.push_back({"sharding", ShardingText(proto.sharding())});
  if (proto.frontend_attributes().map_size() > 0) {
    out.push_back({"frontend_attributes", FrontendAttributesText(proto.frontend_attributes())});
  }
  if (proto.has_metadata()) {
    std::string text = MetadataText(proto.metadata());
    if (text != "{}") out.push_back({"metadata", text});
  }
  if (!proto.backend_config().empty() && proto.opcode() != "custom-call") {
    out.push_back({"backend_config", BackendConfigText(proto.backend_config())});
  }
  return out;
}

void CustomCallBackendConfigToProto(const std::string& text, xla::HloInstructionProto* proto) {
  proto->set_backend_config(DecodeBackendConfig(text));
  if (BackendConfigText(proto->backend_config()) != text) {
    proto->set_retarget_backend_config_text(text);
  }
}

std::string CustomCallBackendConfigFromProto(const xla::HloInstructionProto& proto) {
  if (proto.has_retarget_backend_config_text()) return proto.retarget_backend_config_text();
  return BackendConfigText(proto.backend_config());
}

void HeaderAttributesToProto(const std::vector<OpaqueAttribute>& attributes,
                             xla::HloModuleProto* proto) {
  bool alias_used = false, frontend_used = false;
  auto* list = proto->mutable_retarget_header_attributes();
  for (const OpaqueAttribute& a : attributes) {
    std::optional<std::string> regenerated;
    if (a.name == "input_output_alias") {
      regenerated = MapInto(a.value, &alias_used, proto->mutable_input_output_alias(),
                            ParseInputOutputAlias, InputOutputAliasText);
    } else if (a.name == "frontend_attributes") {
      regenerated = MapInto(a.value, &frontend_used, proto->mutable_frontend_attributes(),
                            ParseFrontendAttributes, FrontendAttributesText);
    }
    Record(a, regenerated, list);
  }
  if (!alias_used) proto->clear_input_output_alias();
  if (!frontend_used) proto->clear_frontend_attributes();
}

std::vector<OpaqueAttribute> HeaderAttributesFromProto(const xla::HloModuleProto& proto) {
  std::vector<OpaqueAttribute> out;
  if (proto.retarget_header_attributes_size() > 0) {
    for (const auto& entry : proto.retarget_header_attributes()) {
      if (entry.has_value()) {
        out.push_back({entry.name(), entry.value()});
      } else if (entry.name() == "input_output_alias") {
        out.push_back({entry.name(), InputOutputAliasText(proto.input_output_alias())});
      } else if (entry.name() == "frontend_attributes") {
        out.push_back({entry.name(), FrontendAttributesText(proto.frontend_attributes())});
      }
    }
    return out;
  }
  if (proto.input_output_alias().entries_size() > 0) {
    out.push_back({"input_output_alias", InputOutputAliasText(proto.input_output_alias())});
  }
  if (proto.frontend_attributes().map_size() > 0) {
    out.push_back({"frontend_attributes", FrontendAttributesText(proto.frontend_attributes())});
  }
  return out;
}

}  // namespace hlo::proto_internal
