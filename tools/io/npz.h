// numpy .npy / .npz files: one array per entry (`arg0`, `arg1`, … for inputs; `out0`, … for
// outputs; a tuple flattened depth-first as `arg0.0`, `arg0.1`, …).
//
// Reads stored and deflate-compressed archives (np.savez and np.savez_compressed), little- and
// big-endian dtypes, C and Fortran order. bf16 has no numpy dtype: bf16 tensors are written as
// float32 (exact) and read from float32 (rounded to nearest even) or uint16 bit patterns.
// Malformed files raise hlo::Error naming the file and entry.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "hlo/literal.h"

namespace io {

// An array as stored in the file, before conversion to a target shape.
struct NpyArray {
  std::string name;
  hlo::Literal literal;  // element type from the dtype (float32 for f4, …)
};

std::vector<NpyArray> ReadNpz(const std::string& path);
hlo::Literal ReadNpy(const std::string& path);
// Writes an uncompressed .npz (np.load reads it). bf16 literals are written as float32.
void WriteNpz(const std::string& path, const std::vector<NpyArray>& arrays);
std::string EncodeNpy(const hlo::Literal& literal);  // the .npy bytes of one array
// The archive's bytes as ReadNpz reads them; `path` names it in error messages.
std::vector<NpyArray> DecodeNpz(std::string_view bytes, const std::string& path);
hlo::Literal DecodeNpy(std::string_view bytes, const std::string& what);

// Converts a file array to `shape` (element type conversion per the bf16 rule above; dims must
// match exactly). Throws hlo::Error mentioning `what` on mismatch.
hlo::Literal ConformToShape(const hlo::Literal& array, const hlo::Shape& shape,
                            const std::string& what);

}  // namespace io
