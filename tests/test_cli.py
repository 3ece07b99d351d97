"""The command line end to end, in a subprocess, as a user runs it."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pairmetrics as pe


def cli(*args, check=True):
    proc = subprocess.run([sys.executable, "-m", "pairmetrics", *map(str, args)], capture_output=True, text=True,
                          timeout=300)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 3, 60).astype(float)
    scores = labels + rng.normal(size=60)
    return rng, scores, labels


def write(path, array, fmt):
    if fmt == "npy":
        np.save(path, array)
    elif fmt == "txt":
        np.savetxt(path, array)
    else:
        delimiter = "," if fmt == "csv" else "\t"
        header = delimiter.join(f"c{i}" for i in range(1 if array.ndim == 1 else array.shape[1]))
        np.savetxt(path, array, delimiter=delimiter, header=header, comments="")
    return path


@pytest.mark.parametrize("fmt", ["npy", "csv", "tsv", "txt"])
def test_paired_reads_every_format_and_json_parses(tmp_path, data, fmt):
    _, scores, labels = data
    s = write(tmp_path / f"s.{fmt}", scores, fmt)
    y = write(tmp_path / f"y.{fmt}", labels, fmt)
    record = json.loads(cli("paired", s, y, "--min-dist", 1.0, "--json").stdout)
    expected = pe.paired_evaluation(scores, labels, 1.0)
    assert (record["n_rankable"], record["n_correct"], record["n_tied"]) == (
        expected.n_rankable, expected.n_correct, expected.n_tied)
    assert record["auc"] == pytest.approx(expected.auc)
    assert "AUC" in cli("paired", s, y).stdout


def test_paired_picks_columns_by_name_and_compares_two_models(tmp_path, data):
    _, scores, labels = data
    table = tmp_path / "t.csv"
    np.savetxt(table, np.column_stack([labels, scores]), delimiter=",", header="label,score", comments="")
    record = json.loads(cli("paired", table, table, "--column", "score", "--label-column", "label", "--json").stdout)
    assert record["n_correct"] == pe.paired_eval(scores, labels)[1]
    other = write(tmp_path / "b.npy", scores[::-1].copy(), "npy")
    s = write(tmp_path / "a.npy", scores, "npy")
    y = write(tmp_path / "y.npy", labels, "npy")
    record = json.loads(cli("paired", s, y, "--compare", other, "--json").stdout)
    assert record["pvalue"] == pytest.approx(pe.compare_paired(scores, scores[::-1], labels).pvalue)


def test_two_vs_two(tmp_path):
    rng = np.random.default_rng(0)
    y = rng.normal(size=(30, 5))
    p = y + rng.normal(size=(30, 5))
    ty, tp = write(tmp_path / "y.npy", y, "npy"), write(tmp_path / "p.csv", p, "csv")
    record = json.loads(cli("two-vs-two", ty, tp, "--metric", "euclidean", "--json").stdout)
    passed, total, accuracy = pe.two_vs_two(y, p, metric="euclidean")
    assert (record["n_passed"], record["n_total"]) == (passed, total)
    assert "2 vs 2 accuracy" in cli("two-vs-two", ty, tp).stdout


def test_crossmatch_points_and_r_style_inputs(tmp_path):
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(10, 3)), rng.normal(size=(12, 3)) + 1
    fx, fy = write(tmp_path / "x.npy", x, "npy"), write(tmp_path / "y.txt", y, "txt")
    record = json.loads(cli("crossmatch", fx, fy, "--json").stdout)
    assert record["a1"] == pe.crossmatch_test(x, y).a1
    z = np.r_[np.zeros(10), np.ones(12)]
    points = np.vstack([x, y])
    d = np.sqrt(((points[:, None] - points[None]) ** 2).sum(-1))
    fz, fd = write(tmp_path / "z.npy", z, "npy"), write(tmp_path / "d.npy", d, "npy")
    record = json.loads(cli("crossmatch", "--groups", fz, "--distances", fd, "--json").stdout)
    assert record["pval"] == pytest.approx(pe.crossmatchtest(z, d).pval)


def test_measures_and_multilabel(tmp_path):
    rng = np.random.default_rng(2)
    actual, predicted = rng.normal(size=40), rng.normal(size=40)
    fa, fp = write(tmp_path / "a.npy", actual, "npy"), write(tmp_path / "p.csv", predicted, "csv")
    record = json.loads(cli("measures", fa, fp, "--json").stdout)
    assert record["absolute"] == pytest.approx(float(pe.absolute_error(actual, predicted)))
    assert record["rms"] == pytest.approx(float(pe.rms_error(actual, predicted)))
    truth, guess = rng.integers(0, 2, (20, 6)), rng.integers(0, 2, (20, 6))
    ft, fg = write(tmp_path / "t.npy", truth, "npy"), write(tmp_path / "g.npy", guess, "npy")
    record = json.loads(cli("multilabel", ft, fg, "--false-neg", 5, "--json").stdout)
    expected = pe.multilabel_counts(truth, guess, false_neg=5)
    assert (record["tp"], record["fn"]) == (int(expected.tp), int(expected.fn))
    assert record["weighted_score"] == pytest.approx(float(expected.weighted_score))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["paired", "missing.npy", "missing.npy"], "no such file"),
        (["paired", "{bad}", "{good}"], "bad.csv"),
        (["paired", "{good}", "{good}", "--min-dist", "-1"], "min_dist"),
        (["paired", "{good}", "{good}", "--min-dist", "x"], "--min-dist"),
        (["two-vs-two", "{good}", "{good}", "--metric", "nope"], "--metric"),
        (["paired", "{good}", "{wide}"], "one column"),
        (["paired", "{good}", "{good}", "--column", "nope"], "no column"),
        (["frobnicate"], "invalid choice"),
        (["paired", "{good}", "{other}"], "same length"),
    ],
)
def test_user_mistakes_exit_2_with_one_line(tmp_path, args, message):
    np.savetxt(tmp_path / "good.csv", np.arange(5.0))
    np.savetxt(tmp_path / "other.csv", np.arange(6.0))
    np.savetxt(tmp_path / "wide.csv", np.ones((5, 2)), delimiter=",")
    (tmp_path / "bad.csv").write_text("1\n2\nthree\n")
    paths = {k: tmp_path / f"{k}.csv" for k in ("good", "bad", "wide", "other")}
    proc = cli(*[a.format(**paths) for a in args], check=False)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_demo_runs_every_capability():
    report = json.loads(cli("demo", "--small", "--json").stdout)
    assert set(report) == {"paired", "two_vs_two", "crossmatch", "measures", "multilabel"}
    assert 0.5 < report["paired"]["model A AUC"] < 1
    assert report["crossmatch"]["Ea1"] == pytest.approx(200 * 200 / 399)  # n m / (N - 1)
    assert 0 < report["crossmatch"]["exact p-value"] <= 1
    assert 0.5 < report["two_vs_two"]["2 vs 2 accuracy"] < 1
    text = cli("demo", "--small").stdout
    assert "2 vs 2 accuracy" in text and "total" in text


def test_bench_quick_runs():
    import pairmetrics

    # The suite lives in the clone (bench/), not in the wheel: an installed copy must say so in one line.
    if not (Path(pairmetrics.__file__).resolve().parents[2] / "bench" / "run_all.py").is_file():
        proc = cli("bench", "--quick", "--only", "paired", check=False)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "bench" in proc.stderr
        return
    proc = cli("bench", "--quick", "--only", "paired")
    assert "pairmetrics 1 thread" in proc.stdout


# --- user mistakes against internal errors -------------------------------------------------


def run_main(capsys, *args):
    from pairmetrics.__main__ import main

    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_library_validation_error_is_a_user_mistake(tmp_path, capsys):
    np.save(tmp_path / "s.npy", np.array([0.1, np.nan, 0.3]))
    np.save(tmp_path / "y.npy", np.array([0.0, 1.0, 1.0]))
    code, _, err = run_main(capsys, "paired", tmp_path / "s.npy", tmp_path / "y.npy")
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "scores" in err and "Traceback" not in err


@pytest.mark.parametrize("kind", ["numpy", "extension", "typeerror", "attribute", "outside"])
def test_internal_error_shows_traceback_and_exit_70(tmp_path, capsys, monkeypatch, kind):
    # A ValueError/TypeError that pairmetrics' validation did not raise is a bug.
    def broken(*args, **kwargs):
        if kind == "numpy":
            return np.ones(2) + np.ones(3)  # numpy's own ValueError
        if kind == "extension":
            return pe._core.paired_counts(np.ones(3), np.ones(4), 0.5)  # the extension's ValueError
        if kind == "typeerror":
            return len(5)
        if kind == "attribute":
            return None.n_rankable
        raise ValueError("scores: raised outside pairmetrics")

    monkeypatch.setattr(pe, "paired_evaluation", broken)
    np.save(tmp_path / "s.npy", np.arange(4.0))
    code, _, err = run_main(capsys, "paired", tmp_path / "s.npy", tmp_path / "s.npy")
    assert code == 70
    assert "Traceback" in err and "internal error" in err


def test_unreadable_and_directory_paths_are_user_mistakes(tmp_path, capsys):
    code, _, err = run_main(capsys, "paired", tmp_path, tmp_path)
    assert code == 2 and len(err.strip().splitlines()) == 1
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"not a numpy file")
    code, _, err = run_main(capsys, "paired", bad, bad)
    assert code == 2 and "bad.npy" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("array", [np.array(["a", "b"]), np.array([1 + 2j, 3j]), np.zeros((2, 2, 2)),
                                   np.array([1, 2], ">i8"), np.array([], float)])
def test_unusual_npy_files(tmp_path, capsys, array):
    np.save(tmp_path / "a.npy", array)
    np.save(tmp_path / "y.npy", np.arange(array.shape[0], dtype=float) if array.ndim == 1 else np.arange(2.0))
    code, _, err = run_main(capsys, "paired", tmp_path / "a.npy", tmp_path / "y.npy")
    if code == 0:
        assert err == ""
    else:
        assert code == 2, err
        assert len(err.strip().splitlines()) == 1


def test_no_command_without_stdin_is_one_line_exit_2():
    proc = subprocess.run([sys.executable, "-m", "pairmetrics"], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
