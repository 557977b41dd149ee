// The runtime's error type: bad inputs, missing driver, CUDA failures. main() prints the message
// and exits with status 1; nothing in the runtime aborts on bad input.
#pragma once

#include <stdexcept>
#include <string>

namespace gpu::runtime {

class RunError : public std::runtime_error {
 public:
  explicit RunError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace gpu::runtime
