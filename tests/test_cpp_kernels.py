"""Builds and runs the C++ kernel tests (cpp/tests), which check the kernels without Python.

Needs a source checkout, CMake and a C++ compiler; skipped otherwise, except
in CI (CI=true), where a missing tool is a failure rather than a silent skip.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tools():
    cmake = shutil.which("cmake")
    compiler = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    return cmake, compiler


def test_cpp_kernel_tests(tmp_path_factory):
    cmake, compiler = _tools()
    missing = [name for name, tool in (("cmake", cmake), ("a C++ compiler", compiler)) if tool is None]
    if not (ROOT / "cpp" / "tests" / "test_kernels.cpp").is_file():
        missing.append("the source checkout")
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs {', '.join(missing)} to run the C++ kernel tests")
        pytest.skip(f"needs {', '.join(missing)}")
    build = Path(os.environ.get("PAIRMETRICS_CPP_TEST_BUILD") or ROOT / "build" / "cpp-tests")
    configure = [
        cmake,
        "-S",
        str(ROOT),
        "-B",
        str(build),
        "-DPAIRMETRICS_BUILD_MODULE=OFF",
        "-DPAIRMETRICS_BUILD_TESTS=ON",
        "-DCMAKE_BUILD_TYPE=Debug",
        "-DCMAKE_CXX_FLAGS=-O1 -D_GLIBCXX_ASSERTIONS",
    ]
    if shutil.which("ninja") and not (build / "CMakeCache.txt").exists():
        configure += ["-G", "Ninja"]
    for command in (configure, [cmake, "--build", str(build), "--parallel", "2"]):
        proc = subprocess.run(command, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, f"{' '.join(command)}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    executable = next(
        p
        for p in build.rglob("pairmetrics_kernel_tests*")
        if p.is_file() and p.suffix in ("", ".exe") and os.access(p, os.X_OK)
    )
    proc = subprocess.run([str(executable)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = proc.stdout.strip().splitlines()[-1]
    assert summary.endswith(" 0 failures") and not summary.startswith("0 tests"), summary
