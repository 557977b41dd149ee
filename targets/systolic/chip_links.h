// The chips of a multi-chip accelerator system (retarget run --target systolic --devices N):
// what a collective costs one chip. Every chip is the configured accelerator running the same
// per-device program; a collective's values are exchanged exactly (the host backend's
// collectives meet through the run's rendezvous), and its time on each chip is
//
//   wait   until the group's last member arrives: the chips' simulated clocks meet at the
//          collective, so a chip that got there early idles (skew between chips is real time)
//   link   the ring algorithm over the configured links (compiler/communication.h: for a group
//          of n, an all-reduce sends 2(n-1)/n of the buffer over each chip's link and takes
//          2(n-1) steps of link.latency_ns); collective-permute one transfer
//
// What is assumed, not simulated: the links are not SystemC modules yet (no contention with
// DRAM traffic, no overlap of a collective with the chip's compute: the chip waits for it),
// and every chip drives one link each way to its ring neighbours at link.bandwidth_gbps. With
// link.bandwidth_gbps = 0 (a one-chip preset) a collective between chips goes through the host:
// its bytes are charged at the host link's bandwidth, as any host step's.
#pragma once

#include <cstdint>
#include <span>

#include "hlo/collective_runtime.h"
#include "hlo/ir.h"
#include "simulator/isa/arch_config.h"

namespace targets {

struct LinkCost {
  int64_t cycles = 0;      // at the chip's clock
  double bytes_sent = 0;   // over this chip's links
  double energy_pj = 0;    // bytes_sent x energy.link_pj_per_byte
};

// The link time of `collective` among `group` chips; zero when group is 1 or there are no
// links (link.bandwidth_gbps = 0).
LinkCost CollectiveLinkCost(const hlo::Instruction& collective, int64_t group,
                            const systolic::ArchConfig& config);

// Offers this chip's clock `now` (cycles) to the members of its `group` (hlo::CollectiveGroup
// of `collective`, this chip included) and returns the latest of them: when the group's last
// member arrives. Throws hlo::Error as the rendezvous does (deadlock, another chip's failure).
int64_t LastArrival(const hlo::Instruction& collective, const hlo::DeviceView& device,
                    std::span<const int64_t> group, int64_t now);

}  // namespace targets
