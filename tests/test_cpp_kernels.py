"""Runs the C++ kernel tests (cpp/tests), which check the kernels without Python.

``pip install .`` builds them next to the module (``build/<wheel tag>/cpp``) with the kernels as shipped; when
they are missing or older than a source file, the test builds its own copy (Debug, -O1, with the standard
library's assertions) in ``build/cpp-tests``. Needs a source checkout, and for that fallback CMake and a C++
compiler; skipped otherwise, except in CI (CI=true), where a missing tool is a failure rather than a silent skip.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXECUTABLES = (
    "pairmetrics_kernel_tests",
    "pairmetrics_matching_tests",
    "pairmetrics_ranking_tests",
    "pairmetrics_rank_tests",
    "pairmetrics_rank_kernel_tests",
)


def _tools():
    cmake = shutil.which("cmake")
    compiler = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    return cmake, compiler


def _executables(directory: Path) -> list[Path] | None:
    """The test executables under ``directory``, or None when one is missing."""
    found = []
    for name in EXECUTABLES:
        paths = [p for p in directory.glob(f"{name}*") if p.suffix in ("", ".exe") and os.access(p, os.X_OK)]
        if not paths:
            return None
        found.append(paths[0])
    return found


def _newest_source() -> float:
    sources = [p for p in (ROOT / "cpp").rglob("*") if p.suffix in (".cpp", ".hpp", ".txt")]
    return max(p.stat().st_mtime for p in [*sources, ROOT / "CMakeLists.txt"])


def _current_executables() -> list[Path] | None:
    """The executables of the newest build under build/ (pip's, a developer's), if they are current."""
    newest = _newest_source()
    for directory in sorted((ROOT / "build").glob("*/cpp"), key=lambda d: d.stat().st_mtime, reverse=True):
        executables = _executables(directory)
        if executables and min(p.stat().st_mtime for p in executables) >= newest:
            return executables
    return None


def _build_own() -> list[Path]:
    cmake, compiler = _tools()
    missing = [name for name, tool in (("cmake", cmake), ("a C++ compiler", compiler)) if tool is None]
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
        "-DPAIRMETRICS_TEST_PORTABLE_INT128=OFF",
        "-DCMAKE_BUILD_TYPE=Debug",
        "-DCMAKE_CXX_FLAGS=-O1 -D_GLIBCXX_ASSERTIONS",
    ]
    if shutil.which("ninja") and not (build / "CMakeCache.txt").exists():
        configure += ["-G", "Ninja"]
    build_tests = [cmake, "--build", str(build), "--parallel", "2", "--target", *EXECUTABLES]
    for command in (configure, build_tests):
        proc = subprocess.run(command, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, f"{' '.join(command)}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    executables = _executables(build / "cpp")
    assert executables is not None, f"the build in {build} made no test executables"
    return executables


def test_cpp_kernel_tests():
    if not (ROOT / "cpp" / "tests" / "test_kernels.cpp").is_file():
        if os.environ.get("CI"):
            pytest.fail("CI needs the source checkout to run the C++ kernel tests")
        pytest.skip("needs the source checkout")
    for executable in _current_executables() or _build_own():
        proc = subprocess.run([str(executable)], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        summary = proc.stdout.strip().splitlines()[-1]
        assert summary.endswith(" 0 failures") and not summary.startswith("0 tests"), summary
