#!/usr/bin/env python3
"""Unit tests of bench/xla_kernel_counts.py's HLO-text reader and counting (no jax needed).

Every expected number below is counted by hand from the snippet above it, following the
definitions of docs/ownership.md. Run: python3 bench/xla_kernel_counts_test.py
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xla_kernel_counts as xkc  # noqa: E402  (the path above must come first)

# XLA's dump style: '%' names, signatures, metadata and backend configs. Hand count:
#   entry:     kLoop fusion of add+multiply+broadcast (3, multi-op), dot (1), custom-call (1),
#              kCustom fusion holding one convolution (1, single-op), reduce (1; its reducer is
#              not analyzed), while (no code), parameter/constant/tuple/gte/bitcast (no code);
#   body:      kLoop fusion of negate+abs (2, multi-op), copy (1);
#   condition: compare (1).
#   kernels 4+1 (entry) + 2 (body) + 1 (condition) = 8; non-trivial 3+1+1+1+1+2+1+1 = 11;
#   in multi-op fusions 3+2 = 5.
XLA_STYLE = r"""
HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[4]{0})->(f32[4]{0}, s32[])}

%add_reducer (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(%a, %b)
}

%fused_loop (p0: f32[4], p1: f32[]) -> f32[4] {
  %p0 = f32[4]{0} parameter(0)
  %p1 = f32[] parameter(1)
  %bcast = f32[4]{0} broadcast(%p1), dimensions={}
  %sum.1 = f32[4]{0} add(%p0, %bcast)
  ROOT %prod = f32[4]{0} multiply(%sum.1, %sum.1)
}

%fused_conv (q0: f32[1,4,4,1], q1: f32[1,1,1,1]) -> f32[1,4,4,1] {
  %q0 = f32[1,4,4,1]{3,2,1,0} parameter(0)
  %q1 = f32[1,1,1,1]{3,2,1,0} parameter(1)
  ROOT %conv = f32[1,4,4,1]{3,2,1,0} convolution(%q0, %q1), dim_labels=b01f_01io->b01f
}

%fused_body (r0: f32[4]) -> f32[4] {
  %r0 = f32[4]{0} parameter(0)
  %neg = f32[4]{0} negate(%r0)
  ROOT %abs = f32[4]{0} abs(%neg)
}

%body (state: (f32[4], s32[])) -> (f32[4], s32[]) {
  %state = (f32[4]{0}, s32[]) parameter(0)
  %v = f32[4]{0} get-tuple-element(%state), index=0
  %i = s32[] get-tuple-element(%state), index=1
  %f = f32[4]{0} fusion(%v), kind=kLoop, calls=%fused_body
  %c = f32[4]{0} copy(%f)
  ROOT %next = (f32[4]{0}, s32[]) tuple(%c, %i)
}

%cond (s: (f32[4], s32[])) -> pred[] {
  %s = (f32[4]{0}, s32[]) parameter(0)
  %n = s32[] get-tuple-element(%s), index=1
  %limit = s32[] constant(3)
  ROOT %less = pred[] compare(%n, %limit), direction=LT
}

ENTRY %main.1 (x: f32[4]) -> (f32[4], s32[]) {
  %x = f32[4]{0} parameter(0)
  %k = f32[] constant(2)
  %loop = f32[4]{0} fusion(%x, %k), kind=kLoop, calls=%fused_loop, metadata={op_name="calls=%bogus body=%cond"}
  %m = f32[4,4]{1,0} bitcast(%loop)
  %d = f32[4,4]{1,0} dot(%m, %m), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %cc = f32[4,4]{1,0} custom-call(%d), custom_call_target="my_kernel"
  %img = f32[1,4,4,1]{3,2,1,0} bitcast(%cc)
  %w = f32[1,1,1,1]{3,2,1,0} bitcast(%k)
  %ynn = f32[1,4,4,1]{3,2,1,0} fusion(%img, %w), kind=kCustom, calls=%fused_conv, backend_config={"outer_dimension_partitions":[],"fusion_config":{"kind":"__ynn_fusion"}}
  %flat = f32[4,4]{1,0} bitcast(%ynn)
  %r = f32[4]{0} reduce(%flat, %k), dimensions={1}, to_apply=%add_reducer
  %zero = s32[] constant(0)
  %init = (f32[4]{0}, s32[]) tuple(%r, %zero)
  %w.1 = (f32[4]{0}, s32[]) while(%init), condition=%cond, body=%body
  %out = f32[4]{0} get-tuple-element(%w.1), index=0
  ROOT %result = (f32[4]{0}, s32[]) tuple(%out, %zero)
}
"""

# Retarget's printer style: no '%', no signatures. A nested fusion is a container (exp + the
# two ops inside = 3), a fusion of trivial ops alone is still one kernel with one instruction.
RETARGET_STYLE = """
HloModule nested

inner {
  a = f32[2]{0} parameter(0)
  n = f32[2]{0} negate(a)
  ROOT s = f32[2]{0} sqrt(n)
}

outer {
  b = f32[2]{0} parameter(0)
  e = f32[2]{0} exponential(b)
  ROOT i = f32[2]{0} fusion(e), kind=kLoop, calls=inner
}

only_bitcast {
  c = f32[2]{0} parameter(0)
  ROOT t = f32[1,2]{1,0} bitcast(c)
}

ENTRY main {
  x = f32[2]{0} parameter(0)
  f = f32[2]{0} fusion(x), kind=kLoop, calls=outer
  ROOT g = f32[1,2]{1,0} fusion(f), kind=kLoop, calls=only_bitcast
}
"""


class CountKernelsTest(unittest.TestCase):
    def test_xla_style_module_counts_by_hand(self):
        counts = xkc.count_kernels(XLA_STYLE)
        self.assertEqual(counts["entry"], "main.1")
        self.assertEqual(counts["kernels"], 8)
        self.assertEqual(counts["entry_kernels"], 5)
        self.assertEqual(counts["fusions"], 3)
        self.assertEqual(counts["fusions_by_kind"], {"kLoop": 2, "kCustom(__ynn_fusion)": 1})
        self.assertEqual(counts["unfused_kernels_by_opcode"],
                         {"compare": 1, "copy": 1, "custom-call:my_kernel": 1, "dot": 1,
                          "reduce": 1})
        self.assertEqual(counts["non_trivial_instructions"], 11)
        self.assertEqual(counts["in_multi_op_fusions"], 5)
        self.assertAlmostEqual(counts["fusion_coverage"], 5 / 11)

    def test_nested_fusions_are_opened_and_trivial_fusions_are_kernels(self):
        counts = xkc.count_kernels(RETARGET_STYLE)
        self.assertEqual(counts["kernels"], 2)
        self.assertEqual(counts["non_trivial_instructions"], 3 + 1)
        self.assertEqual(counts["in_multi_op_fusions"], 3)
        self.assertAlmostEqual(counts["fusion_coverage"], 0.75)

    def test_module_without_non_trivial_instructions_has_zero_coverage(self):
        counts = xkc.count_kernels("ENTRY %e {\n  ROOT %p = f32[] parameter(0)\n}\n")
        self.assertEqual((counts["kernels"], counts["non_trivial_instructions"]), (0, 0))
        self.assertEqual(counts["fusion_coverage"], 0.0)


class ParseHloTextTest(unittest.TestCase):
    def test_tuple_shapes_tiled_layouts_and_strings_do_not_confuse_the_opcode(self):
        text = ('ENTRY %e {\n'
                '  %p = (f32[2]{0}, (s32[], f32[8,128]{1,0:T(8,128)})) parameter(0)\n'
                '  ROOT %t = f32[8,128]{1,0:T(8,128)} get-tuple-element(%p), index=1,'
                ' metadata={op_name="while(x) calls=%nope"}\n'
                '}\n')
        entry, computations = xkc.parse_hlo_text(text)
        self.assertEqual(entry, "e")
        self.assertEqual([(i.name, i.opcode, i.callees) for i in computations["e"]],
                         [("p", "parameter", []), ("t", "get-tuple-element", [])])

    def test_branch_computations_are_all_called(self):
        text = ('ENTRY %e {\n  %i = s32[] parameter(0)\n'
                '  ROOT %c = f32[] conditional(%i), branch_computations={%b0, %b1.x}\n}\n')
        _, computations = xkc.parse_hlo_text(text)
        self.assertEqual(computations["e"][1].callees, ["b0", "b1.x"])

    def test_errors_name_the_line(self):
        cases = [
            ("HloModule m\n", "no ENTRY computation"),
            ("  %a = f32[] parameter(0)\n", "line 1: expected an instruction inside"),
            ("ENTRY %e {\n  %a = (f32[], s32[] tuple()\n}\n", "line 2: unbalanced tuple shape"),
            ("ENTRY %e {\n  %a = f32[]\n}\n", "line 2: no opcode after the shape"),
            ("ENTRY %e\n", "line 1: expected a computation header"),
        ]
        for text, message in cases:
            with self.subTest(text=text):
                with self.assertRaisesRegex(xkc.HloTextError, message):
                    xkc.parse_hlo_text(text)


if __name__ == "__main__":
    unittest.main()
