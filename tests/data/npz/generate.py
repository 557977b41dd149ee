#!/usr/bin/env python3
"""Regenerates the tiny numpy-written fixtures read by tests/tools/npz_test.cc.

Run from this folder: python3 generate.py   (needs numpy; not part of the build or of make test).
The values are simple on purpose, so the test can state them by hand.
"""
import io
import zipfile

import numpy as np
from numpy.lib import format as npformat

np.save("f32_c.npy", (np.arange(6, dtype="<f4") * 0.5 - 1).reshape(2, 3))
np.save("f64_be.npy", np.array([1.5, -2.25, np.inf, -0.0, np.nan], dtype=">f8"))
np.save("i4_fortran.npy", np.asfortranarray(np.arange(6, dtype="<i4").reshape(2, 3)))
np.save("i2_fortran_3d.npy", np.asfortranarray(np.arange(24, dtype="<i2").reshape(2, 3, 4)))
np.save("bool.npy", np.array([True, False, True]))
np.save("u2_be.npy", np.array([1, 258, 65535], dtype=">u2"))
np.save("f2.npy", np.array([1.0, -0.5, 65504, np.inf], dtype="<f2"))
np.save("i8_scalar.npy", np.array(-7, dtype="<i8"))
np.save("empty.npy", np.zeros((0, 3), dtype="<f4"))
for version in [(2, 0), (3, 0)]:
    with open(f"v{version[0]}.npy", "wb") as f:
        npformat.write_array(f, np.array([[1, 2], [3, 4]], dtype="<u4"), version=version)

np.savez("stored.npz", arg0=np.array([1, -2, 3], dtype="<i1"),
         arg1=np.array([[0.25, 4.0]], dtype="<f4"), arg2=np.array(2**40 + 3, dtype="<u8"))
np.savez_compressed("deflate.npz", arg0=np.zeros(1000, dtype="<f4"),
                    arg1=np.arange(5, dtype="<i8") * -3)

with zipfile.ZipFile("zip64.npz", "w", compression=zipfile.ZIP_STORED) as z:
    buffer = io.BytesIO()
    np.save(buffer, np.array([7, 8, 9], dtype="<i2"))
    with z.open("arg0.npy", "w", force_zip64=True) as entry:
        entry.write(buffer.getvalue())
