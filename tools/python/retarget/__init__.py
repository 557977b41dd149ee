"""Retarget from Python: load a JAX function or an HLO file, run it on every target, compare
targets, build the portability report, sweep the accelerator's parameters.

    import jax.numpy as jnp, numpy as np, retarget

    m = retarget.load(lambda x, w: jnp.tanh(x @ w), np.ones((8, 16), np.float32),
                      np.ones((16, 4), np.float32))
    out = m.run("cpu")                       # list of numpy arrays, out0, out1, ...
    m.compare("systolic")                    # Comparison(matched=True, ...)
    r = m.report(["cpu", "systolic"])        # dict of the report's JSON; HTML in notebooks
    rows = retarget.sweep(m, array=["16x16", "32x32"], dram_gbps=[10, 40])

The compiler runs in this process (the extension `retarget._retarget`); sweeps run the
`retarget` executable, one child process per point, as `retarget sweep` does. docs/python.md.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from . import _retarget
from ._retarget import Error

__all__ = ["Error", "LoweringError", "Module", "Comparison", "Report", "load", "report", "sweep",
           "targets"]

DEFAULT_REPORT_TARGETS = ("cpu", "gpu", "systolic")


class LoweringError(Error):
    """A JAX function could not be lowered to HLO with the example arguments given."""


def targets() -> list[str]:
    """The targets this build runs: interp, cpu, gpu (host emulation without a GPU), systolic."""
    return _retarget.targets()


def load(source: Any, *example_args: Any, name: str | None = None) -> "Module":
    """A module from a JAX function (lowered with `example_args`), a `jax.stages.Lowered`, or
    the path of an HLO text or binary HloModuleProto file (the content decides which)."""
    if isinstance(source, (str, os.PathLike)):
        if example_args:
            raise TypeError("retarget.load(path) takes no example arguments")
        return Module(_retarget.load_file(os.fspath(source)))
    if hasattr(source, "compiler_ir"):  # already lowered
        if example_args:
            raise TypeError("retarget.load(lowered) takes no example arguments")
        return _from_lowered(source, name or "lowered")
    if callable(source):
        return _from_lowered(_lower(source, example_args), name or _function_name(source))
    raise TypeError(f"retarget.load: expected a JAX function, a jax.stages.Lowered or a path, "
                    f"got {type(source).__name__}")


def _function_name(function: Any) -> str:
    return getattr(function, "__name__", None) or type(function).__name__


def _lower(function: Any, example_args: tuple) -> Any:
    try:
        import jax
    except ImportError as e:
        raise ImportError("retarget.load(function) lowers with JAX, which is not installed: "
                          "pip install jax") from e
    name = _function_name(function)
    try:
        jitted = function if hasattr(function, "lower") else jax.jit(function)
        return jitted.lower(*example_args)
    except Exception as e:  # JAX raises TypeError, ValueError, its own errors ...
        raise LoweringError(f"cannot lower '{name}' with the {len(example_args)} example "
                            f"argument(s) given: {type(e).__name__}: {e}") from e


def _from_lowered(lowered: Any, name: str) -> "Module":
    # The HloModuleProto JAX hands to XLA, before XLA's optimizations.
    proto = lowered.compiler_ir("hlo").as_serialized_hlo_module_proto()
    return Module(_retarget.parse_proto(proto, f"<{name}>"))


@dataclass(frozen=True)
class Comparison:
    """One target against another on the same inputs (the tolerances of `run --compare`)."""
    matched: bool
    summary: str  # "MATCHED (...)" or "MISMATCH out0[2,7]: expected ..."
    worst_array: str = ""
    worst_index: tuple = ()
    worst_expected: float = 0.0
    worst_actual: float = 0.0

    def __bool__(self) -> bool:
        return self.matched


class Report(dict):
    """The portability report: a dict with the fields of `retarget report --json`
    (docs/report-format.md), its terminal table as `.table`, and the page of
    `retarget report --html` as `.html()` (shown by notebooks through `_repr_html_`)."""

    def __init__(self, native: Any):
        super().__init__(json.loads(native.json()))
        self._native = native
        self.table: str = native.table()

    def html(self) -> str:
        return self._native.html()

    def _repr_html_(self) -> str:
        return self.html()

    @property
    def has_errors(self) -> bool:
        return self._native.has_errors()


class Module:
    """A verified HLO module. Arrays go in and come out as numpy arrays; bf16 and f8 values
    travel as float32 and complex ones as complex64/128, as in the command line's .npz files."""

    def __init__(self, native: Any):
        self._native = native

    @property
    def name(self) -> str:
        return self._native.name

    @property
    def file(self) -> str:
        """The file it was loaded from, or `<function name>` for a lowered JAX function."""
        return self._native.file

    @property
    def parameter_shapes(self) -> list[str]:
        return self._native.parameter_shapes()

    def text(self) -> str:
        """HLO text, as `retarget print` writes it."""
        return self._native.text()

    def proto(self) -> bytes:
        """The module as a serialized xla.HloModuleProto."""
        return self._native.proto()

    def __repr__(self) -> str:
        shapes = ", ".join(self.parameter_shapes)
        return f"<retarget.Module {self.name} ({shapes}) from {self.file}>"

    def run(self, target: str = "cpu", inputs: Any = None, *, seed: int = 0,
            config: str | None = None, set: Iterable[str] = ()) -> list[np.ndarray]:
        """Runs on `target` and returns the flattened results (out0, out1, ...). `inputs`: the
        entry arguments in order (a tuple parameter as a tuple), a dict by name (arg0, arg0.1,
        ...), or None for the standard random inputs of `seed` (`--inputs random:SEED`).
        `config`/`set`: the accelerator for target "systolic" (a preset or file, KEY=VALUE)."""
        return self.run_with_profile(target, inputs, seed=seed, config=config, set=set)[0]

    def run_with_profile(self, target: str = "cpu", inputs: Any = None, *, seed: int = 0,
                         config: str | None = None, set: Iterable[str] = ()
                         ) -> tuple[list[np.ndarray], dict[str, float]]:
        """As run(), and the target's profile counters (wall_ms, cycles, kernels, ...)."""
        outputs, profile = _retarget.run(self._native, target, _encode_inputs(inputs), seed,
                                         config, list(set))
        return [_decode_npy(data) for _, data in outputs], dict(profile)

    def compare(self, target: str, against: str = "interp", inputs: Any = None, *,
                seed: int = 0, rtol: float | None = None, atol: float | None = None
                ) -> Comparison:
        """Runs `target` and `against` on the same inputs and compares every output."""
        result = _retarget.compare(self._native, target, against, _encode_inputs(inputs), seed,
                                   rtol, atol)
        result["worst_index"] = tuple(result["worst_index"])
        return Comparison(**result)

    def report(self, targets: Sequence[str] = DEFAULT_REPORT_TARGETS, **options: Any) -> Report:
        """The portability report of this module (see retarget.report for the options)."""
        return report(self, targets=targets, **options)


def report(*modules: Module, targets: Sequence[str] = DEFAULT_REPORT_TARGETS,
           config: str | None = None, set: Iterable[str] = (), prices: str | None = None,
           estimate_only: bool = False, max_run_seconds: float | None = None) -> Report:
    """`retarget report` over `modules`: owners, latency, energy, cost and the share carried
    across each pair of `targets`. `config`/`set` give the systolic column's accelerator,
    `prices` a price file, `estimate_only` skips running and simulating."""
    if not modules:
        raise ValueError("retarget.report needs at least one module")
    for module in modules:
        if not isinstance(module, Module):
            raise TypeError(f"retarget.report takes Modules, got {type(module).__name__}")
    models = [(_report_name(m), m._native) for m in modules]
    return Report(_retarget.report(models, list(targets), config, list(set), prices,
                                   estimate_only, max_run_seconds))


def _report_name(module: Module) -> str:
    file = module.file
    if file.startswith("<") and file.endswith(">"):
        return file[1:-1]
    return os.path.splitext(os.path.basename(file))[0]


def sweep(module: Module | str | os.PathLike, *, config: str | None = None, jobs: int = 1,
          estimate_only: bool = False, as_frame: bool | None = None,
          axes: Mapping[str, Any] | None = None, **keyword_axes: Any) -> Any:
    """`retarget sweep`: the module on every point of the cross product of the axes, e.g.
    `sweep(m, array=["16x16", "32x32"], dram_gbps=[10, 40])`; keys with dots go in `axes`
    (`axes={"dram.bandwidth_gbps": [10, 40]}`). Returns one row per point: a pandas DataFrame
    when pandas is installed (as_frame=None) or required (as_frame=True), else a list of dicts.
    Runs the `retarget` executable ($RETARGET, the one installed with this package, or the
    one on PATH), `jobs` points at a time; its progress goes to stderr."""
    all_axes = dict(axes or {})
    all_axes.update(keyword_axes)
    if not all_axes:
        raise ValueError("retarget.sweep needs at least one axis, e.g. array=['16x16', '32x32']")
    if as_frame:
        _pandas("retarget.sweep(as_frame=True)")
    executable = _executable()
    with tempfile.TemporaryDirectory(prefix="retarget-sweep-") as work:
        path = _module_file(module, work)
        command = [executable, "sweep", path, "-j", str(int(jobs)),
                   "--csv", os.path.join(work, "sweep.csv")]
        if config is not None:
            command += ["--config", config]
        if estimate_only:
            command.append("--estimate-only")
        for key, values in all_axes.items():
            command += ["--set", f"{key}={_axis_values(key, values)}"]
        # Progress lines are passed on as they come (a notebook shows sys.stderr); the last one
        # is the message when the sweep fails.
        last = "(no message)"
        with subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True) as process:
            for line in process.stderr:
                sys.stderr.write(line)
                if line.strip():
                    last = line.strip()
        if process.returncode != 0:
            raise Error(f"retarget sweep failed (exit {process.returncode}): {last}")
        csv_path = os.path.join(work, "sweep.csv")
        if as_frame is not False:
            pandas = _pandas(None)
            if pandas is not None:
                return pandas.read_csv(csv_path, keep_default_na=False)
        with open(csv_path, newline="") as f:
            return [{k: _number_or_text(v) for k, v in row.items()} for row in csv.DictReader(f)]


def _pandas(required_by: str | None) -> Any:
    try:
        import pandas
        return pandas
    except ImportError as e:
        if required_by is None:
            return None
        raise ImportError(f"{required_by} returns a pandas DataFrame, and pandas is not "
                          f"installed: pip install pandas (or pass as_frame=False for a list "
                          f"of dicts)") from e


def _executable() -> str:
    candidates = [os.environ.get("RETARGET", ""),
                  os.path.join(os.path.dirname(__file__), "bin", "retarget"),
                  shutil.which("retarget") or ""]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise Error("retarget.sweep runs the retarget executable, which was not found: set "
                "RETARGET=/path/to/retarget or put it on PATH")


def _module_file(module: Module | str | os.PathLike, work: str) -> str:
    if isinstance(module, (str, os.PathLike)):
        return os.fspath(module)
    if not isinstance(module, Module):
        raise TypeError(f"retarget.sweep takes a Module or a path, got {type(module).__name__}")
    if os.path.isfile(module.file):
        return module.file
    path = os.path.join(work, f"{module.name or 'module'}.pb")
    with open(path, "wb") as f:
        f.write(module.proto())
    return path


def _axis_values(key: str, values: Any) -> str:
    if isinstance(values, str):
        return values
    if isinstance(values, Iterable):
        items = [str(v) for v in values]
        if not items:
            raise ValueError(f"retarget.sweep: axis '{key}' has no values")
        return ",".join(items)
    return str(values)


def _number_or_text(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


# numpy has no bf16 or f8 dtypes; ml_dtypes (JAX's) arrays of them travel as float32, which the
# extension rounds back to the parameter's type.
_WIDENED_KINDS = ("bfloat16", "float8", "float4", "float6", "int4", "uint4", "int2", "uint2")


def _as_numpy(value: Any) -> np.ndarray:
    array = np.asarray(value)
    if any(array.dtype.name.startswith(kind) for kind in _WIDENED_KINDS):
        wide = np.int32 if "int" in array.dtype.name else np.float32
        array = array.astype(wide)
    return array


def _encode_inputs(inputs: Any) -> bytes | None:
    if inputs is None:
        return None
    named: dict[str, np.ndarray] = {}
    if isinstance(inputs, Mapping):
        for key, value in inputs.items():
            named[str(key)] = _as_numpy(value)
    else:
        if not isinstance(inputs, (list, tuple)):
            inputs = [inputs]

        def flatten(prefix: str, value: Any) -> None:
            if isinstance(value, (list, tuple)):
                for i, item in enumerate(value):
                    flatten(f"{prefix}.{i}", item)
            else:
                named[prefix] = _as_numpy(value)

        for i, value in enumerate(inputs):
            flatten(f"arg{i}", value)
    buffer = io.BytesIO()
    np.savez(buffer, **named)
    return buffer.getvalue()


def _decode_npy(data: bytes) -> np.ndarray:
    return np.load(io.BytesIO(data), allow_pickle=False)
