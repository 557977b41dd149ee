// Internal pieces of the binary proto I/O (hlo/proto_io.h), split by concern:
//   proto_shape_literal.cc  shapes, layouts and literals  <-> ShapeProto / LiteralProto
//   proto_attrs.cc          typed attribute structs        <-> HloInstructionProto fields
//   proto_opaque.cc         opaque text attributes         <-> OpMetadata, OpSharding, ... + the
//                                                              Retarget verbatim extension
//   proto_io.cc             modules, computations, ids, entry, ordering (the public entry points)
// Not part of the public API: only the proto_*.cc files include this header.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hlo.pb.h"
#include "hlo/ir.h"

namespace hlo::proto_internal {

// Every read error is located at the input file (line 0: protos have no lines).
[[noreturn]] void Fail(const SourceLocation& loc, const std::string& message);

// ----- shapes and literals ------------------------------------------------------------------------

// Writes the shape with a layout on every array (the IR's, or the default one where it has
// none): XLA requires layouts in protos.
void ShapeToProto(const Shape& shape, xla::ShapeProto* proto);
// Depth-first indices of the array leaves of `shape` without a layout (has_layout == false), and
// the inverse: clears the layout of those leaves again after reading.
std::vector<int32_t> LayoutlessLeaves(const Shape& shape);
void ClearLayouts(Shape& shape, const std::vector<int32_t>& leaves);
// Validates element type, dims (>= 0), rank (<= max_rank), tuple nesting and that a layout is a
// permutation of the dimensions. `what` names the owner for error messages.
Shape ShapeFromProto(const xla::ShapeProto& proto, const SourceLocation& loc,
                     const std::string& what);

// Writes the literal in the layout of `layout_source` (its instruction's shape, compatible with
// the literal): XLA requires a constant's literal layout to equal the instruction's.
void LiteralToProto(const Literal& literal, const Shape& layout_source, xla::LiteralProto* proto);
// Reads a literal that must be compatible with `expected` (the instruction's shape). Checks the
// allocation limit before allocating and the element count of every data field; data stored in a
// non-default layout is permuted into the logical row-major order Literal uses.
Literal LiteralFromProto(const xla::LiteralProto& proto, const Shape& expected,
                         const SourceLocation& loc, const std::string& what);

// ----- typed attributes ---------------------------------------------------------------------------

// Fills the XLA fields for `instruction`'s typed attributes (not ids, operands or called
// computations). Called computations of `while` are reordered by the caller, not here.
void AttrsToProto(const Instruction& instruction, xla::HloInstructionProto* proto);
// Builds the attribute struct the IR uses for `opcode` from the XLA fields.
Attrs AttrsFromProto(Opcode opcode, const xla::HloInstructionProto& proto, const Shape& shape,
                     const SourceLocation& loc, const std::string& what);

// ----- opaque attributes --------------------------------------------------------------------------

// Maps opaque attributes to XLA's fields where their text parses (metadata, sharding,
// backend_config, frontend_attributes) and records all of them, in order, in the Retarget
// extension, with the verbatim text wherever regenerating it from the XLA field would differ.
void OpaqueAttributesToProto(const std::vector<OpaqueAttribute>& attributes,
                             xla::HloInstructionProto* proto);
// The inverse; for protos written by XLA (no extension) the text is generated from XLA's fields.
std::vector<OpaqueAttribute> OpaqueAttributesFromProto(const xla::HloInstructionProto& proto);

// The custom-call backend_config: XLA's field holds the decoded string, the IR the text as printed.
void CustomCallBackendConfigToProto(const std::string& text, xla::HloInstructionProto* proto);
std::string CustomCallBackendConfigFromProto(const xla::HloInstructionProto& proto);

// Module header attributes (input_output_alias, frontend_attributes, ...), same scheme.
void HeaderAttributesToProto(const std::vector<OpaqueAttribute>& attributes,
                             xla::HloModuleProto* proto);
std::vector<OpaqueAttribute> HeaderAttributesFromProto(const xla::HloModuleProto& proto);

// HLO text string literals: `"..."` with C escapes.
std::string QuoteString(std::string_view raw);

// Text forms of the mapped opaque attributes (proto_opaque_text.cc). Parse* returns false, and
// leaves the message unspecified, when the text is not in a form it maps.
bool ParseMetadata(std::string_view text, xla::OpMetadata* metadata);
std::string MetadataText(const xla::OpMetadata& metadata);
bool ParseSharding(std::string_view text, xla::OpSharding* sharding);
std::string ShardingText(const xla::OpSharding& sharding);
bool ParseFrontendAttributes(std::string_view text, xla::FrontendAttributes* attributes);
std::string FrontendAttributesText(const xla::FrontendAttributes& attributes);
bool ParseInputOutputAlias(std::string_view text, xla::HloInputOutputAliasProto* alias);
std::string InputOutputAliasText(const xla::HloInputOutputAliasProto& alias);
// The stack-frame tables (FileNames ... StackFrames, as printed) as XLA's StackFrameIndexProto:
// false, leaving `index` empty, when the text is not in the form XLA prints
// (proto_stack_frames.cc). StackFrameTablesText prints an index the way XLA does.
bool StackFrameIndexFromTables(std::string_view text, xla::StackFrameIndexProto* index);
std::string StackFrameTablesText(const xla::StackFrameIndexProto& index);
// backend_config: the IR keeps the printed text (`"quoted"` or raw `{...}`), XLA the string.
std::string DecodeBackendConfig(std::string_view text);
std::string BackendConfigText(const std::string& decoded);

}  // namespace hlo::proto_internal
