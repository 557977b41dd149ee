// The token protocol of a double-buffered contraction (dot or convolution) tile, shared by
// emit_matmul.cc and emit_conv.cc so both order their units the same way.
//
// Tile t uses UB set t%S (S = ub_sets, 2 or 3) and accumulator set t%2:
//   load:   [t >= S: wait store->load]  ...loads...  signal load->mxu (and load->vector)
//   mxu:    wait load->mxu  [t >= 2: wait drain->mxu]  ...ldw/matmul...  signal mxu->next
//   vector: wait load->vector, mxu->vector  ...epilogue...  [t+2 < T: signal vector->mxu]
//           signal vector->store                                   (only with an epilogue)
//   store:  wait next->store  ...store...  [t+S < T: signal store->load]
//           [t+2 < T: signal store->mxu]                         (only without an epilogue)
// where `next` is the vector unit with an epilogue, else the store unit, and `drain` is the unit
// that last reads accumulator set t%2 (vector with an epilogue, else store).
//
// Guarantees: every signal has exactly one matching wait (the [t >= 2] / [t >= S] waits pair
// with the [t+2 < T] / [t+S < T] signals), so a program built with it is balanced. It cannot
// deadlock when each wait's signal precedes it in program order: tile t's loads after tile
// t - S's store, its matmuls after tile t - 2's drain (the emitters' loops keep this).
#pragma once

#include <cstdint>

#include "targets/systolic/lowering/program_builder.h"

namespace systolic::lowering {

class ContractionPipeline {
 public:
  ContractionPipeline(ProgramBuilder& builder, bool vector_stage, int64_t tiles,
                      int64_t ub_sets = 2)
      : b_(builder), vector_(vector_stage), tiles_(tiles), ub_sets_(ub_sets) {}

  void BeginLoads(int64_t t) {
    if (t >= ub_sets_) b_.Wait(Unit::kStore, Unit::kLoad);
  }
  void EndLoads() {
    b_.Signal(Unit::kLoad, Unit::kMxu);
    if (vector_) b_.Signal(Unit::kLoad, Unit::kVector);
  }
  void BeginMxu(int64_t t) {
    b_.Wait(Unit::kLoad, Unit::kMxu);
    if (t >= 2) b_.Wait(Drain(), Unit::kMxu);  // accumulator set t%2 was read out
  }
  void EndMxu() { b_.Signal(Unit::kMxu, vector_ ? Unit::kVector : Unit::kStore); }
  void BeginVector() {
    b_.Wait(Unit::kLoad, Unit::kVector);
    b_.Wait(Unit::kMxu, Unit::kVector);
  }
  void EndVector(int64_t t) {
    if (t + 2 < tiles_) b_.Signal(Unit::kVector, Unit::kMxu);
    b_.Signal(Unit::kVector, Unit::kStore);
  }
  void BeginStore() { b_.Wait(vector_ ? Unit::kVector : Unit::kMxu, Unit::kStore); }
  void EndStore(int64_t t) {
    if (t + ub_sets_ < tiles_) b_.Signal(Unit::kStore, Unit::kLoad);
    if (!vector_ && t + 2 < tiles_) b_.Signal(Unit::kStore, Unit::kMxu);
  }

 private:
  Unit Drain() const { return vector_ ? Unit::kVector : Unit::kStore; }
  ProgramBuilder& b_;
  bool vector_;
  int64_t tiles_;
  int64_t ub_sets_;
};

}  // namespace systolic::lowering
