// What a collective costs on a target's interconnect: the ring formulas NCCL's tests use to
// relate a collective's time to the link bandwidth (nccl-tests, doc/PERFORMANCE.md: the "bus
// bandwidth" factors). For a group of n devices, S the bytes of one device's whole buffer, B
// the link bandwidth per direction and a the latency of one ring step:
//
//   all-reduce                                 2(n-1)/n * S/B + 2(n-1) a   (S: the operand)
//   all-gather                                  (n-1)/n * S/B +  (n-1) a   (S: the result)
//   reduce-scatter, all-to-all                  (n-1)/n * S/B +  (n-1) a   (S: the operand)
//   collective-permute                                    S/B +        a   (S: the operand)
//   partition-id, replica-id, the -done halves            0
//
// These are bandwidth-optimal rings: exact in the bandwidth term for large messages on a ring
// whose every device drives one link each way; small messages are latency-bound, and a tree or
// a switch changes the latency term (n-1 steps become log2 n), not the bandwidth term.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/target_description.h"
#include "hlo/ir.h"

namespace compiler {

struct CollectiveTime {
  double seconds = 0;
  double bytes_sent = 0;  // per device, over its links
  int64_t group = 1;      // devices in the group (collective-permute: 2 when it sends)
};

// The time of `collective` over `link` when its group has `group` devices. A group of one, or
// a target without links (link.bytes_per_second == 0), costs nothing and sends nothing.
CollectiveTime CollectiveSeconds(const hlo::Instruction& collective, int64_t group,
                                 const Interconnect& link);

}  // namespace compiler
