#!/usr/bin/env python3
"""Writes the accelerator-simulator speed workloads (docs/perf.md, "Accelerator simulator speed")
as .sasm programs into a directory. Each is a complete, semaphore-synchronized program; DRAM
starts as zeros (speed does not depend on the values).

  gemm_512_int8   (tpu-v4-mxu, 128x128 ws) C[512x512] = A[512x512] x W[512x512] int8: DMA in,
                  16 double-buffered 128x128 weight tiles (ldw 0, ldw 1, matmul 0, then matmul i,
                  ldw i+1), accumulate over k in the accumulators, DMA out.       134 M MACs
  conv_56x56      (tpu-v1, 256x256) a 3x3 convolution, 28 -> 256 channels, 58x58 input, as four
                  bands of 14 output rows (mxu.conv), requantized to int8 (vrequant), DMA out.
                                                                                  202 M MACs
  softmax_512x1024 (tpu-v1, 256 lanes) row softmax of a 512 x 1024 f32 matrix in 8 blocks of
                  64 rows, DMA of block b+1 overlapping the vector work on block b.  4.2 M elements
                  x 8 vector instructions
  dma_copy_16mib  (tpu-v1) 256 chunks of 64 KiB DRAM -> UB -> DRAM, each store waiting for its
                  load: bound by the 34 GB/s DDR3 channel.
  vector_small_100k (tpu-v1) 100 000 vadd of 256 f32 elements: the per-instruction overhead.

Usage: sim_workloads.py OUT_DIR  (prints "NAME CONFIG" per workload written)
"""
import os
import sys


def gemm_512_int8():
    size, tile = 512, 128
    a, w = 0x0, 0x40000  # UB: A and W, 256 KiB each
    out = ["cfg.set reg=load.dram_row_stride, value=0"]
    for i in range(4):  # 128 rows (64 KiB) per transfer, so the engine pipelines them
        out.append(f"dma.load dram={i * 0x10000}, local=ub:{a + i * 0x10000}, row_bytes=512, rows=128, planes=1")
        out.append(f"dma.load dram={0x100000 + i * 0x10000}, local=ub:{w + i * 0x10000}, row_bytes=512, rows=128, planes=1")
    out.append("sem.signal unit=load, sem=0, count=1")
    out.append("sem.wait unit=mxu, sem=0, count=1")
    out.append(f"cfg.set reg=mxu.src_row_stride, value={size}")  # tiles are 128-wide slices
    tiles = [(n, k) for n in range(size // tile) for k in range(size // tile)]

    def ldw(i):
        n, k = tiles[i]
        src = w + k * tile * size + n * tile
        return f"mxu.ldw src=ub:{src}, k={tile}, n={tile}, dtype=s8, buf={i % 2}"

    def matmul(i):
        n, k = tiles[i]
        dst = n * size * tile * 4
        return (f"mxu.matmul src=ub:{a + k * tile}, dst=acc:{dst}, m={size}, dtype=s8, "
                f"buf={i % 2}, acc={1 if k else 0}, dataflow=ws")

    out += [ldw(0), ldw(1), matmul(0)]
    for i in range(1, len(tiles)):
        out.append(matmul(i))
        if i + 1 < len(tiles):
            out.append(ldw(i + 1))
    out.append("sem.signal unit=mxu, sem=1, count=1")
    out.append("sem.wait unit=store, sem=1, count=1")
    for n in range(size // tile):  # each n tile: 512 rows x 128 s32 = 256 KiB
        out.append(f"dma.store local=acc:{n * size * tile * 4}, dram={0x200000 + n * 0x40000}, "
                   f"row_bytes=512, rows=512, planes=1")
    return out


def conv_56x56():
    in_w, cin, cout, bands, band_rows = 58, 28, 256, 4, 14
    in_h = band_rows + 2
    k = 9 * cin
    out_pixels = band_rows * (in_w - 2)
    weights = 0x0
    out = [f"dma.load dram=0x0, local=ub:{weights}, row_bytes={cout}, rows={k}, planes=1"]
    band_bytes = in_h * in_w * cin
    for b in range(bands):  # band b: input rows 14b .. 14b+15
        dram = 0x100000 + b * band_rows * in_w * cin
        out.append(f"dma.load dram={dram}, local=ub:{0x20000 + b * 0x10000}, row_bytes={band_bytes}, rows=1, planes=1")
    out.append("sem.signal unit=load, sem=0, count=1")
    out.append("sem.wait unit=mxu, sem=0, count=1")
    out.append(f"mxu.ldw src=ub:{weights}, k={k}, n={cout}, dtype=s8, buf=0")
    for b in range(bands):
        out.append(f"mxu.conv src=ub:{0x20000 + b * 0x10000}, dst=acc:{b * out_pixels * cout * 4}, "
                   f"in_h={in_h}, in_w={in_w}, kh=3, kw=3, stride=1, dtype=s8, buf=0, acc=0, dataflow=ws")
        out.append(f"sem.signal unit=mxu, sem={1 + b}, count=1")
    out.append("cfg.set reg=quant.scale, value=0x3c000000")  # 1/128
    for b in range(bands):
        out.append(f"sem.wait unit=vector, sem={1 + b}, count=1")
        out.append(f"vrequant dst=ub:{0x100000 + b * out_pixels * cout}, src=acc:{b * out_pixels * cout * 4}, "
                   f"count={out_pixels * cout}, src_type=s32, dst_type=s8")
        out.append(f"sem.signal unit=vector, sem={8 + b}, count=1")
        out.append(f"sem.wait unit=store, sem={8 + b}, count=1")
        out.append(f"dma.store local=ub:{0x100000 + b * out_pixels * cout}, dram={0x1000000 + b * out_pixels * cout}, "
                   f"row_bytes={cout}, rows={out_pixels}, planes=1")
    return out


def softmax_512x1024():
    rows, cols, blocks = 512, 1024, 8
    r = rows // blocks
    block_bytes = r * cols * 4
    out = []
    for b in range(blocks):
        # Per block (2 MiB of the UB): the input, five row-major matrices, three row vectors.
        base = b * 8 * block_bytes
        x, mb, d, e, rb, y = (base + i * block_bytes for i in range(6))
        m, s, rc = (base + 6 * block_bytes + i * 0x1000 for i in range(3))
        out += [
            f"dma.load dram={b * block_bytes}, local=ub:{x}, row_bytes={cols * 4}, rows={r}, planes=1",
            "sem.signal unit=load, sem=0, count=1",
            "sem.wait unit=vector, sem=0, count=1",
            f"vredmax dst=ub:{m}, src=ub:{x}, rows={r}, cols={cols}, dtype=f32",
            f"vbcast dst=ub:{mb}, src=ub:{m}, rows={r}, cols={cols}, dtype=f32, per_row=1",
            f"vsub dst=ub:{d}, a=ub:{x}, b=ub:{mb}, count={r * cols}, dtype=f32",
            f"vexp dst=ub:{e}, src=ub:{d}, count={r * cols}, dtype=f32",
            f"vredsum dst=ub:{s}, src=ub:{e}, rows={r}, cols={cols}, dtype=f32",
            f"vrecip dst=ub:{rc}, src=ub:{s}, count={r}, dtype=f32",
            f"vbcast dst=ub:{rb}, src=ub:{rc}, rows={r}, cols={cols}, dtype=f32, per_row=1",
            f"vmul dst=ub:{y}, a=ub:{e}, b=ub:{rb}, count={r * cols}, dtype=f32",
            "sem.signal unit=vector, sem=1, count=1",
            "sem.wait unit=store, sem=1, count=1",
            f"dma.store local=ub:{y}, dram={0x1000000 + b * block_bytes}, row_bytes={cols * 4}, rows={r}, planes=1",
        ]
    return out


def dma_copy_16mib():
    chunk, chunks = 0x10000, 256
    out = []
    for c in range(chunks):
        out += [
            f"dma.load dram={c * chunk}, local=ub:{c * chunk}, row_bytes=4096, rows=16, planes=1",
            "sem.signal unit=load, sem=0, count=1",
            "sem.wait unit=store, sem=0, count=1",
            f"dma.store local=ub:{c * chunk}, dram={0x10000000 + c * chunk}, row_bytes=4096, rows=16, planes=1",
        ]
    return out


def vector_small_100k():
    # Per-instruction overhead: 100 000 short vector adds (256 elements, one lane row each).
    out = ["vfill dst=ub:0x0, count=512, dtype=f32, value=0x3f800000"]
    for i in range(100_000):
        out.append(f"vadd dst=ub:{0x1000 + (i % 64) * 1024}, a=ub:0x0, b=ub:0x400, count=256, dtype=f32")
    return out


WORKLOADS = [
    ("gemm_512_int8", "tpu-v4-mxu", gemm_512_int8),
    ("conv_56x56", "tpu-v1", conv_56x56),
    ("softmax_512x1024", "tpu-v1", softmax_512x1024),
    ("dma_copy_16mib", "tpu-v1", dma_copy_16mib),
    ("vector_small_100k", "tpu-v1", vector_small_100k),
]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, config, make in WORKLOADS:
        with open(os.path.join(sys.argv[1], name + ".sasm"), "w") as f:
            f.write(f"# {name} (generated by bench/sim_workloads.py; config {config})\n")
            f.write("\n".join(make() + ["halt"]) + "\n")
        print(name, config)


if __name__ == "__main__":
    main()
