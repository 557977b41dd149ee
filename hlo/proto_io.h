// Binary proto I/O: xla.HloModuleProto and the xla.HloProto dump wrapper (module = field 1), with
// XLA's field numbers (hlo/hlo.proto is our schema, written from the documented numbers; unknown
// fields are skipped). Instruction ids are 64-bit keys; opcodes are strings.
//
// What XLA sees in a proto we write (scripts/check_proto_with_jax.py checks that XLA accepts it):
//   - every typed attribute in XLA's own field; while's called computations in XLA's order
//     {body, condition}; a layout on every array shape (the default one where the IR has none)
//     and constants' literals in their instruction's layout, as XLA requires;
//   - instruction names made unique across the module (XLA requires it, the IR does not): a
//     repeated name is written as `name.N`;
//   - opaque text attributes parsed into XLA's fields where XLA has one and the text parses:
//     metadata -> OpMetadata (op_type, op_name, source_file, source_line, source_end_line,
//     source_column, source_end_column, deduplicated_name, stack_frame_id, scheduling_name),
//     sharding -> OpSharding ({replicated}, {manual}, {maximal device=N}, {devices=[..]ids},
//     {devices=[..]<=[..]} with optional T(perm), last_tile_dim_replicate, and tuples of these),
//     backend_config -> backend_config (decoded from its quoted form), frontend_attributes ->
//     FrontendAttributes; in the header input_output_alias -> HloInputOutputAliasProto and
//     frontend_attributes -> FrontendAttributes;
//   - the stack-frame tables (FileNames, FunctionNames, FileLocations, StackFrames, before or
//     after the computations) -> stack_frame_index, the StackFrameIndexProto metadata's
//     stack_frame_id points into; a proto from XLA prints its index back as those tables;
//   - NOT seen by XLA: opaque attributes XLA has no proto field for or whose text does not parse
//     (e.g. operand_layout_constraints, control-predecessors, header num_partitions and the
//     spmd flags, a sharding with metadata) and tables in a form XLA does not print. They are
//     not dropped: see below.
//
// Lossless round trip: Retarget extension fields (numbers 50000+, which XLA skips as unknown)
// list every opaque attribute in order, keeping the verbatim text wherever regenerating it from
// XLA's field would not reproduce it exactly, plus elided-constant marks, layout-less shapes,
// original (non-unique) names, custom-call backend_config text and the trailing tables. So
// ReadHloProto(WriteHloProto(m)) prints exactly like m. A proto written by XLA (no extension)
// gets its opaque attribute text generated from XLA's fields, in XLA's print order, and loses the
// defaults XLA's protos spell out but its text leaves implicit (empty scalar layouts, a compare
// type implied by the operand type, all-default operand_precision), so it reads as XLA's own
// text of the module would parse.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "hlo/ir.h"

namespace hlo {

// Reads either an HloProto (wrapper) or a bare HloModuleProto. Throws hlo::Error (with the file
// name and, where known, the offending instruction) on malformed input.
std::unique_ptr<Module> ReadHloProto(std::string_view bytes, std::string_view filename);

// Serializes `module` as an HloModuleProto (wrap=false) or an HloProto wrapper (wrap=true).
std::string WriteHloProto(const Module& module, bool wrap = false);

}  // namespace hlo
