// SCALE-Sim compatibility: reads SCALE-Sim v2's config (.cfg) and topology (.csv) files, times
// every layer with the matrix-unit timing model (mxu_timing.h) in compat mode, and writes
// COMPUTE_REPORT.csv with SCALE-Sim v2's columns and number formatting.
//
// Guarantees:
//   - Malformed input throws hlo::Error with FILE:LINE:COL of the offending key or field.
//   - The report's numbers are those of TimeGemm (compat mode: folds back to back, stall-free
//     memory as in SCALE-Sim's CALC mode); floats are printed as Python's repr() prints them.
//   - Keys this mode does not use (SRAM sizes, offsets, bandwidth) are read and kept, not checked
//     beyond being present where SCALE-Sim requires them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/diagnostic.h"
#include "simulator/mxu_timing.h"

namespace simulator {

struct ScaleSimConfig {
  std::string run_name;
  ArrayShape array;  // ArrayHeight x ArrayWidth, Dataflow
  int64_t ifmap_sram_kb = 0;
  int64_t filter_sram_kb = 0;
  int64_t ofmap_sram_kb = 0;
  std::string bandwidth;            // "10" or a list; used only by SCALE-Sim's USER mode
  std::string interface_bandwidth;  // "CALC" or "USER"
};

// Parses an INI file as Python's configparser does for SCALE-Sim: `[section]`, `key = value` or
// `key: value`, case-insensitive keys, `#`/`;` comment lines. `file_name` is used in errors.
ScaleSimConfig ParseScaleSimConfig(std::string_view text, const std::string& file_name);

struct TopologyLayer {
  std::string name;
  GemmShape gemm;  // the layer as a GEMM (a convolution is mapped with ConvAsGemm)
  hlo::SourceLocation location;
};

// Parses a topology CSV: the first line is a header; blank lines and rows of empty cells are
// skipped; one trailing empty field (the trailing comma) is dropped. Conv form: name, IFMAP height,
// IFMAP width, filter height, filter width, channels, filters, stride [, extra columns ignored]; a
// layer whose name contains "DP" is depthwise and becomes one single-channel layer per channel, as
// in SCALE-Sim. GEMM form (`gemm`): name, M, N, K.
std::vector<TopologyLayer> ParseScaleSimTopology(std::string_view text,
                                                 const std::string& file_name, bool gemm);

// One report row per layer, in topology order.
std::vector<MxuTiming> TimeTopology(const ScaleSimConfig& config,
                                    const std::vector<TopologyLayer>& layers);

// COMPUTE_REPORT.csv: "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %,
// Compute Util %," then one row per layer, cells joined by ", " with a trailing ",".
std::string FormatComputeReport(const std::vector<MxuTiming>& layers);

// A double as Python's repr() writes it ("100.0", "55.55555555555556", "1e-05").
std::string PythonFloatRepr(double value);

}  // namespace simulator
