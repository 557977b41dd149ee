"""The Python package `retarget` (tools/python) end to end, with jax from the build's venv:
JAX functions lowered and run on every target against JAX's own results, files and protos,
a real corpus module, the report with its HTML, sweeps as DataFrames and lists, and the errors
a user meets (a function that cannot be lowered, a wrong argument, a missing optional package,
a bad file, an unknown target).

Run by ctest (`python_package`) with the build's package on PYTHONPATH and RETARGET naming the
built executable:  PYTHONPATH=build/python RETARGET=build/bin/retarget \
                     build/venv/bin/python3 tests/python/test_package.py
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import jax
import jax.numpy as jnp
import numpy as np

import retarget

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(os.path.dirname(REPO), "shared", "corpus", "xla")
LAYER_NORM = os.path.join(CORPUS, "layer_norm_1x4096x768_bf16.hlo")
MLP = os.path.join(REPO, "examples", "mlp.hlo")


def mlp(x, w1, w2):
    return jnp.tanh(x @ w1) @ w2, jnp.sum(x * x, axis=1)


def example_args():
    rng = np.random.default_rng(7)
    return (rng.standard_normal((8, 32), np.float32),
            rng.standard_normal((32, 16), np.float32) / 6,
            rng.standard_normal((16, 4), np.float32) / 4)


class LoadAndRun(unittest.TestCase):
    def test_a_jax_function_runs_on_every_target_as_jax_computes_it(self):
        args = example_args()
        expected = [np.asarray(v) for v in jax.jit(mlp)(*args)]
        module = retarget.load(mlp, *args)
        self.assertEqual(module.parameter_shapes, ["f32[8,32]", "f32[32,16]", "f32[16,4]"])
        self.assertEqual(module.file, "<mlp>")
        self.assertEqual(set(retarget.targets()), {"interp", "cpu", "gpu", "systolic"})
        for target in retarget.targets():
            with self.subTest(target=target):
                outputs = module.run(target, args)
                self.assertEqual(len(outputs), 2)
                for got, want in zip(outputs, expected):
                    self.assertEqual(got.shape, want.shape)
                    self.assertEqual(got.dtype, np.float32)
                    # The systolic target multiplies in bf16 passes of tpu-v1's MXU.
                    tolerance = 2e-2 if target == "systolic" else 1e-5
                    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)

    def test_inputs_by_name_and_random_inputs(self):
        args = example_args()
        module = retarget.load(mlp, *args)
        by_position = module.run("interp", args)
        by_name = module.run("interp", {"arg0": args[0], "arg1": args[1], "arg2": args[2]})
        for a, b in zip(by_position, by_name):
            np.testing.assert_array_equal(a, b)
        # Random inputs are deterministic in the seed and differ between seeds.
        first, again, other = (module.run("interp", seed=s)[1] for s in (3, 3, 4))
        np.testing.assert_array_equal(first, again)
        self.assertFalse(np.array_equal(first, other))

    def test_bf16_functions_take_and_give_float32(self):
        x = jnp.linspace(-2, 2, 64, dtype=jnp.bfloat16).reshape(8, 8)
        f = lambda a: jnp.exp(a) * a  # noqa: E731
        module = retarget.load(f, x)
        self.assertEqual(module.parameter_shapes, ["bf16[8,8]"])
        got = module.run("cpu", [x])[0]
        want = np.asarray(jax.jit(f)(x)).astype(np.float32)
        self.assertEqual(got.dtype, np.float32)
        np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)

    def test_lowered_files_and_protos_load_to_the_same_module(self):
        args = example_args()
        lowered = jax.jit(mlp).lower(*args)
        from_lowered = retarget.load(lowered, name="mlp")
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "mlp.pb")
            with open(path, "wb") as f:
                f.write(from_lowered.proto())
            from_proto = retarget.load(path)
            text_path = os.path.join(work, "mlp.hlo")
            with open(text_path, "w") as f:
                f.write(from_lowered.text())
            from_text = retarget.load(text_path)
        want = from_lowered.run("interp", args)
        for module in (from_proto, from_text):
            for a, b in zip(module.run("interp", args), want):
                np.testing.assert_array_equal(a, b)

    def test_a_corpus_module_on_cpu_and_systolic_matches_the_interpreter(self):
        module = retarget.load(LAYER_NORM)
        self.assertIn("layer_norm", module.file)
        comparison = module.compare("cpu")
        self.assertTrue(comparison.matched, comparison.summary)
        self.assertTrue(comparison.summary.startswith("MATCHED"), comparison.summary)
        outputs, profile = module.run_with_profile("cpu")
        self.assertEqual(outputs[0].shape, (1, 4096, 768))
        self.assertGreater(profile["wall_ms"], 0)
        self.assertTrue(module.compare("systolic"), "systolic vs interp")

    def test_a_tolerance_of_zero_reports_the_worst_element(self):
        # exp on the CPU backend is a polynomial, not the interpreter's libm: with no tolerance
        # at all some element differs, and the comparison names it.
        f = lambda a: jnp.exp(a)  # noqa: E731
        x = np.linspace(-5, 5, 4096, dtype=np.float32)
        module = retarget.load(f, x)
        strict = module.compare("cpu", inputs=[x], rtol=0.0, atol=0.0)
        self.assertFalse(strict.matched)
        self.assertTrue(strict.summary.startswith("MISMATCH"), strict.summary)
        self.assertEqual(strict.worst_array, "out0")
        self.assertEqual(len(strict.worst_index), 1)
        index = strict.worst_index[0]
        self.assertAlmostEqual(strict.worst_expected, float(np.exp(np.float64(x[index]))),
                               delta=abs(strict.worst_expected) * 1e-6)
        self.assertTrue(module.compare("cpu", inputs=[x]).matched)


    def test_an_f32_result_of_bf16_matmuls_gets_bf16_tolerances(self):
        # The module rounds the matmuls' operands to bf16: the CPU's GELU, a few f32 ulps from
        # the interpreter's, flips some of those roundings, so the f32 result is only as close
        # as bf16 allows. The default comparison knows it; f32's own tolerance would not hold.
        bf16 = jnp.bfloat16

        def mlp_bf16(x, w1, w2):
            h = jnp.dot(x.astype(bf16), w1, preferred_element_type=jnp.float32)
            return jnp.dot(jax.nn.gelu(h).astype(bf16), w2, preferred_element_type=jnp.float32)

        rng = np.random.default_rng(0)
        args = (rng.standard_normal((128, 256), np.float32),
                (rng.standard_normal((256, 1024), np.float32) / 16).astype(bf16),
                (rng.standard_normal((1024, 256), np.float32) / 32).astype(bf16))
        module = retarget.load(mlp_bf16, *args)
        self.assertTrue(module.compare("cpu", inputs=args).matched)
        strict = module.compare("cpu", inputs=args, rtol=1e-5, atol=1e-6)
        self.assertFalse(strict.matched, strict.summary)


class Reports(unittest.TestCase):
    def test_the_report_is_the_json_of_retarget_report_with_an_html_page(self):
        module = retarget.load(MLP)
        report = module.report(["cpu", "systolic"], estimate_only=True)
        self.assertFalse(report.has_errors)
        self.assertEqual([m["name"] for m in report["models"]], ["mlp"])
        cells = report["models"][0]["targets"]
        self.assertEqual(list(cells), ["cpu", "systolic"])
        # The same document as the command line's --json (everything is estimated, so every
        # figure is deterministic).
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "r.json")
            subprocess.run([os.environ["RETARGET"], "report", MLP, "--targets", "cpu,systolic",
                            "--estimate-only", "--json", path], check=True,
                           stdout=subprocess.DEVNULL)
            with open(path) as f:
                self.assertEqual(dict(report), json.load(f))
        for cell in cells.values():
            self.assertEqual(cell["latency_source"], "estimated")
            self.assertGreater(cell["latency_ms"], 0)
        self.assertIn("mlp", report.table)
        page = report._repr_html_()
        self.assertTrue(page.lstrip().lower().startswith("<!doctype html>"), page[:80])
        self.assertIn("<canvas", page)

    def test_a_report_over_two_modules_and_a_config(self):
        args = example_args()
        report = retarget.report(retarget.load(mlp, *args), retarget.load(MLP),
                                 targets=["systolic"], config="gemmini", estimate_only=True)
        self.assertEqual([m["name"] for m in report["models"]], ["mlp", "mlp"])
        self.assertIn("gemmini", str(report.get("systolic_config", "")))


class Sweeps(unittest.TestCase):
    AXES = dict(dram_gbps=[10, 40], clock_mhz=[700, 940])

    def test_a_sweep_is_a_dataframe_with_one_row_per_point(self):
        frame = retarget.sweep(retarget.load(MLP), estimate_only=True, **self.AXES)
        self.assertEqual(type(frame).__name__, "DataFrame")
        self.assertEqual(list(frame["point"]), [0, 1, 2, 3])
        self.assertEqual(list(frame["dram_gbps"]), [10, 10, 40, 40])
        self.assertEqual(list(frame["clock_mhz"]), [700, 940, 700, 940])
        self.assertTrue((frame["latency_ms"] > 0).all())

    def test_a_sweep_of_a_jax_function_as_a_list_of_dicts(self):
        module = retarget.load(mlp, *example_args())
        rows = retarget.sweep(module, as_frame=False, jobs=2, estimate_only=True,
                              axes={"array": ["16x16", "32x32"]})
        self.assertEqual([row["point"] for row in rows], [0, 1])
        self.assertTrue(all(row["error"] == "" for row in rows), rows)
        self.assertTrue(all(isinstance(row["latency_ms"], float) for row in rows), rows)


class BadInput(unittest.TestCase):
    def test_a_function_that_cannot_be_lowered(self):
        def branchy(x):
            if x > 0:  # a traced value has no truth value
                return x
            return -x
        with self.assertRaises(retarget.LoweringError) as caught:
            retarget.load(branchy, np.float32(1))
        self.assertIn("cannot lower 'branchy'", str(caught.exception))

    def test_an_example_argument_of_the_wrong_type(self):
        with self.assertRaises(retarget.LoweringError) as caught:
            retarget.load(mlp, "not an array", 1, 2)
        self.assertIn("TypeError", str(caught.exception))
        with self.assertRaises(TypeError):
            retarget.load(12345)

    def test_inputs_that_do_not_fit_the_parameters(self):
        module = retarget.load(mlp, *example_args())
        with self.assertRaises(retarget.Error) as caught:
            module.run("cpu", [np.zeros((3, 3), np.float32)] * 3)
        self.assertIn("arg0", str(caught.exception))

    def test_a_missing_file_and_a_syntax_error_name_the_place(self):
        with self.assertRaises(retarget.Error) as caught:
            retarget.load("/nonexistent/model.hlo")
        self.assertIn("cannot open '/nonexistent/model.hlo'", str(caught.exception))
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "bad.hlo")
            with open(path, "w") as f:
                f.write("HloModule bad\n\nENTRY main {\n  ROOT x = f32[] nonsense()\n}\n")
            with self.assertRaises(retarget.Error) as caught:
                retarget.load(path)
        self.assertRegex(str(caught.exception), r"bad\.hlo:4:\d+: error: ")

    def test_an_unknown_target_lists_the_targets(self):
        module = retarget.load(MLP)
        with self.assertRaises(ValueError) as caught:
            module.run("tpu")
        self.assertIn("tpu", str(caught.exception))
        with self.assertRaises(ValueError) as caught:
            module.report(["cpu", "quantum"])
        self.assertIn("unknown target 'quantum'", str(caught.exception))

    def test_pandas_missing(self):
        saved = sys.modules.get("pandas")
        sys.modules["pandas"] = None  # `import pandas` now raises ImportError
        try:
            with self.assertRaises(ImportError) as caught:
                retarget.sweep(MLP, as_frame=True, dram_gbps=[10])
            self.assertIn("pip install pandas", str(caught.exception))
            rows = retarget.sweep(MLP, estimate_only=True, dram_gbps=[10])
            self.assertIsInstance(rows, list)
            self.assertEqual(len(rows), 1)
        finally:
            if saved is None:
                del sys.modules["pandas"]
            else:
                sys.modules["pandas"] = saved


if __name__ == "__main__":
    unittest.main(verbosity=2)
