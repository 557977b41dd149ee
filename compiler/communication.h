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
// whose every device drives one link each way; small messages are latency-bound.
//
// Other topologies (Interconnect::topology):
//   torus (2-D or 3-D, dimensions d1 x d2 [x d3] = n, TorusDimensions): the dimension-by-
//     dimension algorithm, one ring per dimension on the data left by the previous one. Its
//     rings send sum_i (d_i-1)/d_i * S/(d1..d_{i-1}) = (n-1)/n * S per phase, the ring's bytes,
//     in sum_i (d_i-1) steps per phase instead of n-1 (an all-reduce has two phases);
//     all-to-all keeps the ring's bytes too (a lower bound: a torus's bisection limits it);
//     a permute is one step to a neighbour.
//   switch: the same bytes as the ring, in 2 steps for an all-reduce (reduce-scatter, then
//     all-gather, each one exchange through the switch) and 1 for the others, each step paying
//     the link latency plus the switch's hop_seconds.
// These formulas assume a group is laid out on its own ring, torus or switch ports.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/target_description.h"
#include "hlo/ir.h"

namespace compiler {

struct CollectiveTime {
  double seconds = 0;
  double bytes_sent = 0;  // per device, over its links
  int64_t group = 1;      // devices in the group (collective-permute: 2 when it sends)
};

// The dimensions of the ring or torus a group of `group` devices forms on `topology`: {group} for
// a ring or a switch; for a torus the most nearly square (cubic) factorization, smallest first
// (12 on a 2-D torus is 3 x 4; 8 on a 3-D torus is 2 x 2 x 2; a prime is a ring).
std::vector<int64_t> TorusDimensions(int64_t group, Topology topology);

// The time of `collective` over `link` when its group has `group` devices. A group of one, or
// a target without links (link.bytes_per_second == 0), costs nothing and sends nothing.
CollectiveTime CollectiveSeconds(const hlo::Instruction& collective, int64_t group,
                                 const Interconnect& link);

}  // namespace compiler
