// ProgramBuilder: appends systolic instructions to a Program with the bookkeeping every emitter
// needs — DMA transfers split to the ISA's field widths, stride registers written only when
// their value changes, and dependency tokens between the decoupled units.
//
// Guarantees:
//   - Every instruction appended fits its fields (counts, rows, row bytes are split here), so
//     Encode()/Disassemble() of the result cannot fail; an impossible request (a stride that
//     does not fit the 32-bit register) is an hlo::Error, never a truncated field.
//   - Tokens: Signal(from, to) / Wait(from, to) use one counting semaphore per ordered pair of
//     the four working units, so the k-th Wait of a pair consumes the k-th Signal of that pair.
//     Emitters keep signals and waits balanced; Balanced() checks it (a program with an unpaired
//     wait would deadlock, one with an unpaired signal leaves a semaphore non-zero).
//   - SignalOpDone()/WaitOpDone(): as Barrier(), with the load unit's wait placed later.
//   - Barrier(): the load unit continues only after every earlier instruction of the mxu, the
//     vector unit and the store unit completed. Later work of the other units is ordered after
//     it by the tokens they wait for from the load unit (an op always starts with its loads).
#pragma once

#include <array>
#include <cstdint>
#include <map>

#include "simulator/isa/arch_config.h"
#include "simulator/isa/isa.h"

namespace systolic::lowering {

// The DMA instructions' 16-bit `row_bytes` and `rows` fields (isa.def): the longest contiguous
// row and the most rows one instruction moves.
inline constexpr int64_t kMaxDmaRowBytes = 65535;
inline constexpr int64_t kMaxDmaRows = 65535;

class ProgramBuilder {
 public:
  ProgramBuilder() = default;

  const Program& program() const { return program_; }
  Program Take();  // appends halt and returns the program (the builder is left empty)
  void Append(const Instruction& inst) { program_.instructions.push_back(inst); }
  // An empty builder that knows this one's register values: instructions emitted into it (no
  // tokens) can be moved back with Splice, interleaved with others (emit_conv.cc), as long
  // as those others set other registers meanwhile.
  ProgramBuilder RegistersOnly() const {
    ProgramBuilder fork;
    fork.registers_ = registers_;
    return fork;
  }
  // Appends an instruction emitted into RegistersOnly()'s builder (a cfg.set through the cache).
  void Splice(const Instruction& inst);

  // cfg.set, skipped when the register already holds `value` (registers reset to 0).
  void SetRegister(ConfigRegister reg, int64_t value);
  // cfg.load from the 4 bytes at `local`: the register's value is unknown afterwards (the next
  // SetRegister of it always emits).
  void LoadRegister(ConfigRegister reg, uint64_t local);
  // dma.gather of `rows` rows of `row_bytes`: row r from dram + index[r] * dram_row_stride to
  // local + r * local_row_stride; split into instructions of at most 4095 rows, and of column
  // chunks of whole 8-byte words when a row is longer than the row_bytes field (so no element
  // of up to 8 bytes is cut). Sets the load row-stride registers; load.index_bound is the
  // caller's.
  void Gather(uint64_t dram, int64_t dram_row_stride, uint64_t local, int64_t local_row_stride,
              uint64_t index, int64_t row_bytes, int64_t rows);
  // dma.scatter, the reverse (the store row-stride registers; store.index_bound and
  // store.scatter_add are the caller's).
  void Scatter(uint64_t local, int64_t local_row_stride, uint64_t dram, int64_t dram_row_stride,
               uint64_t index, int64_t row_bytes, int64_t rows);

  // Copies `rows` rows of `row_bytes` between DRAM and local memory; rows are `dram_stride`
  // bytes apart in DRAM and `local_stride` apart locally. Split to the 16-bit fields.
  void Load(uint64_t dram, int64_t dram_stride, uint64_t local, int64_t local_stride,
            int64_t row_bytes, int64_t rows);
  void Store(uint64_t local, int64_t local_stride, uint64_t dram, int64_t dram_stride,
             int64_t row_bytes, int64_t rows);
  // A load of `planes` planes: the transpose pattern (see emit_data_movement.cc).
  void LoadPlanes(uint64_t dram, int64_t dram_row_stride, int64_t dram_plane_stride,
                  uint64_t local, int64_t local_row_stride, int64_t local_plane_stride,
                  int64_t row_bytes, int64_t rows, int64_t planes);

  // A store of `planes` planes (the scatter of emit_block_copy.cc).
  void StorePlanes(uint64_t local, int64_t local_row_stride, int64_t local_plane_stride,
                   uint64_t dram, int64_t dram_row_stride, int64_t dram_plane_stride,
                   int64_t row_bytes, int64_t rows, int64_t planes);

  void Signal(Unit from, Unit to, int bank = 0);
  void Wait(Unit from, Unit to, int bank = 0);
  // Removes the dma.stores among instructions [first, end) whose DRAM address lies in
  // [dram_begin, dram_end): a value nobody reads from DRAM (lowering.cc's on-chip activations).
  void EraseStores(size_t first, size_t end, uint64_t dram_begin, uint64_t dram_end);
  void Barrier();
  // "Op done" tokens, on a second semaphore bank so they never pair with an op's own tokens:
  // SignalOpDone() makes the mxu, the vector unit and the store unit each tell the load unit
  // that they finished every earlier instruction; WaitOpDone() makes the load unit consume one
  // such triple (the k-th call waits for the k-th op). A barrier split in two halves, so the
  // next op's loads can start before this op's compute and stores end.
  void SignalOpDone();
  void WaitOpDone();
  bool Balanced() const;

  // The semaphore of an ordered pair of working units (load, store, mxu, vector); bank 1 holds
  // the "op done" tokens.
  static int SemaphoreFor(Unit from, Unit to, int bank = 0);

 private:
  void TransferPlanes(bool is_load, uint64_t dram, int64_t dram_row_stride,
                      int64_t dram_plane_stride, uint64_t local, int64_t local_row_stride,
                      int64_t local_plane_stride, int64_t row_bytes, int64_t rows,
                      int64_t planes);
  void IndexedTransfer(Opcode opcode, uint64_t dram, uint64_t local, int64_t local_row_stride,
                       uint64_t index, int64_t row_bytes, int64_t rows);
  void Transfer(bool is_load, uint64_t dram, int64_t dram_stride, uint64_t local,
                int64_t local_stride, int64_t row_bytes, int64_t rows);
  Program program_;
  std::map<ConfigRegister, int64_t> registers_;
  std::array<int64_t, 32> outstanding_{};  // signals minus waits, per semaphore
};

}  // namespace systolic::lowering
