"""The command line end to end: in-process through ``main`` (fast), and as a user runs it in a subprocess."""

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pairmetrics as pe
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pairmetrics.__main__ import _parser, main


class Result:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def cli(*args, check=True, stdin=b""):
    """Run ``pairmetrics ARGS`` in this process, with ``stdin`` as standard input."""
    out, err = io.StringIO(), io.StringIO()
    fake_stdin = io.TextIOWrapper(io.BytesIO(stdin))
    saved = sys.stdin
    sys.stdin = fake_stdin
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(a) for a in args])
    finally:
        sys.stdin = saved
    if check:
        assert code == 0, err.getvalue()
    return Result(code, out.getvalue(), err.getvalue())


def cli_process(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "pairmetrics", *map(str, args)],
        capture_output=True,
        input=stdin,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 3, 60).astype(float)
    scores = labels + rng.normal(size=60)
    return rng, scores, labels


def write(path, array, fmt):
    if fmt == "npy":
        np.save(path, array)
    elif fmt == "parquet":
        pd.DataFrame(array.reshape(len(array), -1)).rename(columns=str).to_parquet(path)
    elif fmt == "txt":
        np.savetxt(path, array)
    else:
        delimiter = "," if fmt == "csv" else "\t"
        header = delimiter.join(f"c{i}" for i in range(1 if array.ndim == 1 else array.shape[1]))
        np.savetxt(path, array, delimiter=delimiter, header=header, comments="")
    return path


@pytest.mark.parametrize("fmt", ["npy", "csv", "tsv", "txt", "parquet"])
def test_paired_reads_every_format_and_json_parses(tmp_path, data, fmt):
    _, scores, labels = data
    s = write(tmp_path / f"s.{fmt}", scores, fmt)
    y = write(tmp_path / f"y.{fmt}", labels, fmt)
    record = json.loads(cli("paired", s, y, "--min-dist", 1.0, "--json").stdout)
    expected = pe.paired_evaluation(labels, scores, min_dist=1.0)
    assert (record["n_rankable"], record["n_correct"], record["n_tied"]) == (
        expected.n_rankable,
        expected.n_correct,
        expected.n_tied,
    )
    assert record["auc"] == pytest.approx(expected.auc)
    low, high = pe.paired_evaluation(labels, scores, min_dist=1.0, variance=True).confidence_interval()
    assert record["confidence_interval"] == pytest.approx([low, high], rel=1e-12)
    assert "AUC" in cli("paired", s, y).stdout


def test_paired_picks_columns_by_name_and_compares_two_models(tmp_path, data):
    _, scores, labels = data
    table = tmp_path / "t.csv"
    np.savetxt(table, np.column_stack([labels, scores]), delimiter=",", header="label,score", comments="")
    record = json.loads(cli("paired", table, table, "--column", "score", "--label-column", "label", "--json").stdout)
    assert record["n_correct"] == pe.pairedeval.paired_eval(scores, labels)[1]
    other = write(tmp_path / "b.npy", scores[::-1].copy(), "npy")
    s = write(tmp_path / "a.npy", scores, "npy")
    y = write(tmp_path / "y.npy", labels, "npy")
    record = json.loads(cli("paired", s, y, "--compare", other, "--json").stdout)
    assert record["pvalue"] == pytest.approx(pe.compare_models(labels, [scores, scores[::-1]]).pvalue)


def test_two_vs_two(tmp_path):
    rng = np.random.default_rng(0)
    y = rng.normal(size=(30, 5))
    p = y + rng.normal(size=(30, 5))
    ty, tp = write(tmp_path / "y.npy", y, "npy"), write(tmp_path / "p.csv", p, "csv")
    record = json.loads(cli("two-vs-two", ty, tp, "--metric", "euclidean", "--json").stdout)
    result = pe.two_vs_two(y, p, metric="euclidean")
    passed, total = result.n_passed, result.n_total
    assert (record["n_passed"], record["n_total"]) == (passed, total)
    assert "2 vs 2 accuracy" in cli("two-vs-two", ty, tp).stdout


def test_crossmatch_points_and_r_style_inputs(tmp_path):
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(10, 3)), rng.normal(size=(12, 3)) + 1
    fx, fy = write(tmp_path / "x.npy", x, "npy"), write(tmp_path / "y.txt", y, "txt")
    record = json.loads(cli("crossmatch", fx, fy, "--json").stdout)
    assert record["statistic"] == pe.crossmatch_test(x, y).statistic
    z = np.r_[np.zeros(10), np.ones(12)]
    points = np.vstack([x, y])
    d = np.sqrt(((points[:, None] - points[None]) ** 2).sum(-1))
    fz, fd = write(tmp_path / "z.npy", z, "npy"), write(tmp_path / "d.npy", d, "npy")
    record = json.loads(cli("crossmatch", "--groups", fz, "--distances", fd, "--json", "--seed", "3").stdout)
    assert record["pvalue"] == pytest.approx(pe.crossmatch_test(D=d, labels=z, rng=3).pvalue)
    # tied points: the seed fixes the order that breaks ties; the result is the API's
    ties = np.vstack([np.ones((6, 2)), np.zeros((6, 2))])
    fa, fb = write(tmp_path / "a.npy", ties[::2], "npy"), write(tmp_path / "b.npy", ties[1::2], "npy")
    record = json.loads(cli("crossmatch", fa, fb, "--seed", "5", "--n-neighbors", "3", "--json").stdout)
    assert record["statistic"] == pe.crossmatch_test(ties[::2], ties[1::2], rng=5).statistic


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
    assert report["crossmatch"]["expected under H0"] == pytest.approx(200 * 200 / 399)  # n m / (N - 1)
    assert 0 < report["crossmatch"]["exact p-value"] <= 1
    assert 0.5 < report["two_vs_two"]["2 vs 2 accuracy"] < 1
    text = cli("demo", "--small").stdout
    assert "2 vs 2 accuracy" in text and "total" in text


def test_bench_json_is_json_and_text_is_tables():
    # The suite lives in the clone (bench/), not in the wheel: an installed copy must say so in one line.
    if not (Path(pe.__file__).resolve().parents[2] / "bench" / "run_all.py").is_file():
        proc = cli("bench", "--quick", "--only", "reader", check=False)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "bench" in proc.stderr
        return
    record = json.loads(cli("bench", "--quick", "--only", "reader", "--json").stdout)
    rows = record["reader"]["rows"]
    assert {r["reader"] for r in rows} == {"pandas.read_csv (anchor)", "pairmetrics reader"}
    assert all(r["seconds"] > 0 for r in rows)
    assert "| reader |" in cli("bench", "--quick", "--only", "reader").stdout
    proc = cli("bench", "--quick", "--only", "nope", check=False)
    assert proc.returncode == 2 and "nope" in proc.stderr


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


@pytest.mark.parametrize(
    "array",
    [np.array(["a", "b"]), np.array([1 + 2j, 3j]), np.zeros((2, 2, 2)), np.array([1, 2], ">i8"), np.array([], float)],
)
def test_unusual_npy_files(tmp_path, capsys, array):
    np.save(tmp_path / "a.npy", array)
    np.save(tmp_path / "y.npy", np.arange(array.shape[0], dtype=float) if array.ndim == 1 else np.arange(2.0))
    code, _, err = run_main(capsys, "paired", tmp_path / "a.npy", tmp_path / "y.npy")
    if code == 0:
        assert err == ""
    else:
        assert code == 2, err
        assert len(err.strip().splitlines()) == 1


def test_bare_command_prints_the_usage_and_exits_2():
    proc = subprocess.run(
        [sys.executable, "-m", "pairmetrics"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2 and proc.stderr.startswith("usage: pairmetrics")
    assert all(name in proc.stderr for name in ("paired", "two-vs-two", "crossmatch", "measures", "demo"))
    proc = cli(check=False)
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.startswith("usage: pairmetrics")


# --- reading the input -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def pandas_files(tmp_path_factory):
    """Scores and labels as pandas writes them: ``Series.to_csv(index=False)`` puts the header ``0`` on top."""
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 4, 300).astype(float)
    scores = labels + rng.normal(size=300)
    folder = tmp_path_factory.mktemp("pandas")
    pd.Series(scores).to_csv(folder / "s.csv", index=False)
    pd.Series(labels).to_csv(folder / "y.csv", index=False)
    return folder / "s.csv", folder / "y.csv", scores, labels


def test_numeric_header_is_read_with_header_flag(pandas_files):
    s, y, scores, labels = pandas_files
    record = json.loads(cli("paired", s, y, "--header", "--json").stdout)
    expected = pe.paired_evaluation(labels, scores)
    assert (record["n_rankable"], record["n_correct"]) == (expected.n_rankable, expected.n_correct)


def test_numeric_header_without_flag_is_an_error_naming_both_flags(pandas_files):
    s, y, _, _ = pandas_files
    proc = cli("paired", s, y, "--json", check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "line 1" in proc.stderr and "--header" in proc.stderr and "--no-header" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_no_header_flag_reads_the_first_row_as_data(tmp_path):
    (tmp_path / "s.csv").write_text("0\n0.5\n2\n1\n")
    (tmp_path / "y.csv").write_text("0\n1\n2\n1\n")
    record = json.loads(cli("paired", tmp_path / "s.csv", tmp_path / "y.csv", "--no-header", "--json").stdout)
    expected = pe.paired_evaluation([0, 1, 2, 1], [0, 0.5, 2, 1])
    assert (record["n_rankable"], record["n_correct"]) == (expected.n_rankable, expected.n_correct)


def test_two_vs_two_counts_every_row_of_a_dataframe_csv(tmp_path):
    rng = np.random.default_rng(3)
    y, p = rng.normal(size=(200, 4)), rng.normal(size=(200, 4))
    pd.DataFrame(y).to_csv(tmp_path / "y.csv", index=False)  # header 0,1,2,3
    pd.DataFrame(p).to_csv(tmp_path / "p.csv", index=False)
    assert "0,1,2,3" in cli("two-vs-two", tmp_path / "y.csv", tmp_path / "p.csv", check=False).stderr
    record = json.loads(cli("two-vs-two", tmp_path / "y.csv", tmp_path / "p.csv", "--header", "--json").stdout)
    result = pe.two_vs_two(y, p)
    passed, total = result.n_passed, result.n_total
    assert (record["n_passed"], record["n_total"]) == (passed, total) and total == 200 * 199 // 2


@pytest.mark.parametrize("header", [False, True])
def test_byte_order_mark_is_not_data(tmp_path, data, header):
    _, scores, labels = data
    for name, values in (("s.csv", scores), ("y.csv", labels)):
        text = ("value\n" if header else "") + "".join(f"{float(v)!r}\n" for v in values)
        (tmp_path / name).write_bytes(b"\xef\xbb\xbf" + text.encode())
    record = json.loads(cli("paired", tmp_path / "s.csv", tmp_path / "y.csv", "--json").stdout)
    expected = pe.paired_evaluation(labels, scores)
    assert (record["n_rankable"], record["n_correct"]) == (expected.n_rankable, expected.n_correct)


@pytest.mark.parametrize("fmt", ["npy", "csv", "tsv", "parquet"])
def test_standard_input(tmp_path, data, fmt):
    _, scores, labels = data
    s = write(tmp_path / f"s.{fmt}", scores, fmt)
    y = write(tmp_path / "y.npy", labels, "npy")
    record = json.loads(cli("paired", "-", y, "--json", stdin=s.read_bytes()).stdout)
    assert record["n_correct"] == pe.paired_evaluation(labels, scores).n_correct


def test_standard_input_in_a_subprocess_and_only_once(tmp_path, data):
    _, scores, labels = data
    y = write(tmp_path / "y.npy", labels, "npy")
    s = write(tmp_path / "s.csv", scores, "csv")
    proc = cli_process("paired", "-", y, "--json", stdin=s.read_bytes())
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["n_correct"] == pe.paired_evaluation(labels, scores).n_correct
    proc = cli("paired", "-", "-", check=False, stdin=s.read_bytes())
    assert proc.returncode == 2 and "only one input" in proc.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("s\n1\n2\nthree\n4\n", "line 4: 'three' is not a number"),
        ("a,b\n1,2\n3\n4,5\n", "line 3 has 1 field, expected 2"),
        ("a,b\n1,2\n3,4,5\n", "line 3 has 3 fields, expected 2"),
        ("a,b\n1,2,3\n4,5,6\n", "line 2 has 3 fields, expected 2"),
        ("a,b\n1,2\n3,\n", "line 3: '' is not a number"),
        ("a\n1\n\n2\nNA\n", "line 5: 'NA' is not a number"),
        ("1.5,2x\n3,4\n", "line 1 ('1.5,2x') mixes numbers and text"),
        ("", "empty"),
        ("a,b\n", "no data rows"),
    ],
)
def test_malformed_rows_are_errors_naming_the_line(tmp_path, text, message):
    (tmp_path / "t.csv").write_text(text)
    proc = cli("measures", tmp_path / "t.csv", tmp_path / "t.csv", check=False)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "t.csv" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_malformed_row_far_down_a_large_file(tmp_path):
    lines = [f"{float(v)!r}" for v in np.random.default_rng(0).normal(size=50_000)]
    lines[40_000] = "1.5e"
    (tmp_path / "t.csv").write_text("x\n" + "\n".join(lines) + "\n")
    proc = cli("measures", tmp_path / "t.csv", tmp_path / "t.csv", check=False)
    assert proc.returncode == 2 and "line 40002: '1.5e' is not a number" in proc.stderr


def test_non_utf8_text_is_an_error(tmp_path):
    (tmp_path / "t.csv").write_bytes(b"x\n1.5\n\xff\xfe\n")
    proc = cli("measures", tmp_path / "t.csv", tmp_path / "t.csv", check=False)
    assert proc.returncode == 2 and "UTF-8" in proc.stderr


def test_parquet_columns_by_name_and_non_numeric_columns(tmp_path, data):
    _, scores, labels = data
    pd.DataFrame({"score": scores, "label": labels, "name": ["x"] * len(labels)}).to_parquet(tmp_path / "t.parquet")
    t = tmp_path / "t.parquet"
    record = json.loads(cli("paired", t, t, "--column", "score", "--label-column", "label", "--json").stdout)
    assert record["n_correct"] == pe.paired_evaluation(labels, scores).n_correct
    proc = cli("paired", t, t, "--column", "name", "--label-column", "label", check=False)
    assert proc.returncode == 2 and "'name'" in proc.stderr


def test_npy_works_without_the_cli_extra_and_text_asks_for_it(tmp_path, data, monkeypatch):
    _, scores, labels = data
    s, y = write(tmp_path / "s.npy", scores, "npy"), write(tmp_path / "y.npy", labels, "npy")
    for module in ("pandas", "pyarrow", "pyarrow.parquet", "tqdm"):
        monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    assert json.loads(cli("paired", s, y, "--json").stdout)["n_correct"] == pe.pairedeval.paired_eval(scores, labels)[1]
    proc = cli("paired", write(tmp_path / "s.csv", scores, "csv"), y, check=False)
    assert proc.returncode == 2 and 'pip install "pairmetrics[cli]"' in proc.stderr
    proc = cli("paired", s, y, "--progress", check=False)
    assert proc.returncode == 2 and 'pip install "pairmetrics[cli]"' in proc.stderr


@settings(max_examples=30, deadline=None)
@given(
    values=st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=20),
    delimiter=st.sampled_from([",", "\t"]),
    bom=st.booleans(),
    newline=st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_text_values_round_trip_exactly(values, delimiter, bom, newline):
    import tempfile
    from pathlib import Path

    from pairmetrics._io import load_array

    text = f"a{delimiter}b{newline}" + "".join(f"{v!r}{delimiter}{-v!r}{newline}" for v in values)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ("t.csv" if delimiter == "," else "t.tsv")
        path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
        array = load_array(path, ndim=2)
    np.testing.assert_array_equal(array, np.column_stack([values, [-v for v in values]]))


@pytest.mark.parametrize("fmt", ["csv", "tsv", "txt", "parquet", "npy"])
def test_integers_beyond_2_53_stay_exact(tmp_path, fmt):
    # Read through float64, scores 2**60 ... 2**60 + 39 all tied: AUC 0.5 instead of the exact answer.
    scores = 2**60 + np.arange(40, dtype=np.int64)
    labels = np.random.default_rng(8).integers(0, 3, 40)
    labels[0] = 1  # no header of column numbers
    s, y = write(tmp_path / f"s.{fmt}", scores, fmt), write(tmp_path / f"y.{fmt}", labels, fmt)
    if fmt in ("csv", "tsv", "txt"):  # integers written as integers (np.savetxt would print them as floats)
        s.write_text("".join(f"{v}\n" for v in scores.tolist()))
        y.write_text("".join(f"{v}\n" for v in labels.tolist()))
    record = json.loads(cli("paired", s, y, "--json").stdout)
    want = pe.paired_evaluation(labels, scores)
    assert (record["n_correct"], record["n_tied"]) == (want.n_correct, want.n_tied) and want.n_tied == 0


@pytest.mark.parametrize("fmt", ["csv", "txt", "parquet"])
def test_integers_float64_would_round_are_refused_among_floats(tmp_path, fmt):
    big = 2**60 + 1
    if fmt == "parquet":
        path = tmp_path / "t.parquet"
        pd.DataFrame({"a": np.array([big, 3], dtype=np.int64), "b": [0.5, 1.5]}).to_parquet(path)
    else:
        path = tmp_path / f"t.{fmt}"
        path.write_text(f"0.5\n{big}\n2\n" if fmt == "txt" else f"x\n0.5\n{big}\n2\n")
    proc = cli("measures", path, path, check=False)
    assert proc.returncode == 2 and "2**53" in proc.stderr and path.name in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    from pairmetrics._io import load_array

    exact = tmp_path / "exact.csv"  # a float column may hold 2**60 itself, and 1e300: nothing was rounded
    exact.write_text(f"x\n0.5\n{2**60}\n1e300\n")
    assert load_array(exact).tolist() == [0.5, 2.0**60, 1e300]
    ints = tmp_path / "ints.csv"
    ints.write_text(f"x\n{big}\n-3\n")
    assert load_array(ints).dtype == np.int64 and load_array(ints).tolist() == [big, -3]


def test_integers_then_a_float_far_down_read_in_pieces(tmp_path, monkeypatch):
    import pairmetrics._io
    from pairmetrics._io import load_array

    monkeypatch.setattr(pairmetrics._io, "_PIECE_BYTES", 64)  # the integer pieces come first, then the float
    values = list(range(-60, 60)) + [0.5] + list(range(30))
    path = tmp_path / "t.csv"
    path.write_text("x\n" + "".join(f"{v}\n" for v in values))
    array = load_array(path)
    assert array.dtype == np.float64 and array.tolist() == values
    path.write_text("x\n" + "".join(f"{v}\n" for v in [2**60 + 1] + values))  # an integer float64 would round
    with pytest.raises(ValueError, match="2\\*\\*53"):
        load_array(path)


def test_cr_only_line_ends(tmp_path, monkeypatch):
    # Old Mac line ends: one line to numpy's readers and a broadcast error before.
    scores, labels = np.arange(30) * 0.25, (np.arange(30) + 1) % 3
    s, y = tmp_path / "s.csv", tmp_path / "y.csv"
    s.write_bytes(("score\r" + "\r".join(map(repr, scores.tolist())) + "\r").encode())
    y.write_bytes("\r".join(map(str, labels.tolist())).encode())
    want = pe.paired_evaluation(labels, scores)
    assert json.loads(cli("paired", s, y, "--json").stdout)["n_correct"] == want.n_correct
    import pairmetrics._io

    monkeypatch.setattr(pairmetrics._io, "_PIECE_BYTES", 7)  # pieces cut inside lines and between CR and LF
    crlf = tmp_path / "crlf.csv"
    crlf.write_bytes(("score\r\n" + "\r\n".join(map(repr, scores.tolist())) + "\r\n").encode())
    for path in (s, crlf):
        assert json.loads(cli("paired", path, y, "--json").stdout)["n_correct"] == want.n_correct


def test_missing_values_name_the_file_and_the_line(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("score\n0.5\n\n1.5\nnan\n2.5\n")
    y = write(tmp_path / "y.npy", np.array([1, 0, 1, 0]), "npy")
    proc = cli("paired", path, y, check=False)
    assert proc.returncode == 2 and "s.csv: line 5 has a missing value (NaN)" in proc.stderr
    assert "scores" in proc.stderr
    other = write(tmp_path / "s.npy", np.array([0.5, 1.5, np.nan, 2.5]), "npy")
    proc = cli("paired", other, y, check=False)
    assert proc.returncode == 2 and "s.npy: row 2 (counting from 0) has a missing value" in proc.stderr
    other = write(tmp_path / "s.parquet", np.array([0.5, 1.5, np.nan, 2.5]), "parquet")  # NaN written as null
    proc = cli("paired", other, y, check=False)
    assert proc.returncode == 2 and "s.parquet: column '0' has 1 missing values" in proc.stderr


def test_a_directory_is_named_as_such_and_as_its_argument(tmp_path):
    y = write(tmp_path / "y.npy", np.array([1, 0, 1, 0]), "npy")
    proc = cli("paired", tmp_path, y, check=False)
    assert proc.returncode == 2 and "scores" in proc.stderr and "is a directory" in proc.stderr


def test_compare_two_columns_of_one_file(tmp_path, data):
    # --column applied to both score files: two columns of one CSV compared a model with itself (p = 1).
    _, scores, labels = data
    other = scores + np.random.default_rng(9).normal(size=scores.size)
    table = tmp_path / "t.csv"
    pd.DataFrame({"a": scores, "b": other, "label": labels}).to_csv(table, index=False)
    options = ["--column", "a", "--label-column", "label", "--compare", table, "--json"]
    record = json.loads(cli("paired", table, table, *options, "--compare-column", "b").stdout)
    assert record["pvalue"] == pytest.approx(pe.compare_models(labels, [scores, other]).pvalue)
    proc = cli("paired", table, table, *options, check=False)
    assert proc.returncode == 2 and "--compare-column" in proc.stderr and "itself" in proc.stderr
    for same in ("0", "a"):  # the same column by its index or its name
        proc = cli("paired", table, table, *options[:4], "--compare", table, "--compare-column", same, check=False)
        assert proc.returncode == 2 and "itself" in proc.stderr, same
    b = write(tmp_path / "b.npy", other, "npy")  # another file: --column is not used for it without a column
    proc = cli("paired", table, table, "--column", "a", "--label-column", "label", "--compare", b, check=False)
    assert proc.returncode == 2  # an npy vector has no column "a"
    record = json.loads(
        cli(
            "paired",
            table,
            table,
            "--column",
            "a",
            "--label-column",
            "label",
            "--compare",
            b,
            "--compare-column",
            "0",
            "--json",
            check=False,
        ).stdout
        or "{}"
    )
    assert record == {} or record["pvalue"] == pytest.approx(pe.compare_models(labels, [scores, other]).pvalue)


def test_readme_lists_every_extra():
    import tomllib

    root = Path(__file__).resolve().parents[1]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    readme = (root / "README.md").read_text()
    assert {"cli", "anndata"} <= set(extras)
    assert all(f"`{name}`" in readme for name in extras if name != "test"), sorted(extras)


# --- the command line itself -----------------------------------------------------------------


def test_version():
    proc = cli("--version")
    assert proc.stdout.strip() == f"pairmetrics {pe.__version__}"
    assert cli_process("--version").stdout.decode().strip() == f"pairmetrics {pe.__version__}"


def test_help_names_the_formats_and_describes_every_argument():
    assert ".parquet" in cli("--help").stdout
    parser = _parser()
    subparsers = next(a for a in parser._actions if a.choices and isinstance(a.choices, dict)).choices
    for name, sub in subparsers.items():
        for action in sub._actions:
            assert action.help, f"{name}: {action.dest} has no help"
    text = cli("paired", "--help").stdout
    assert all(word in text for word in ("SCORES", "LABELS", ".csv", ".tsv", ".parquet", ".npy", "'-'"))


def test_progress_bar_over_the_whole_run(tmp_path, data):
    _, scores, labels = data
    s, y = write(tmp_path / "s.csv", scores, "csv"), write(tmp_path / "y.csv", labels, "csv")
    proc = cli("paired", s, y, "--progress")
    assert proc.stderr.count("pairmetrics paired") >= 2 and "100%" in proc.stderr
    assert proc.stderr.endswith("\n")  # left on screen
    assert "rankable pairs" in proc.stdout
    assert cli("paired", s, y, "--no-progress").stderr == ""
    assert cli("paired", s, y).stderr == ""  # stderr is not a terminal


def test_kernel_progress_fills_the_current_step():
    from pairmetrics._progress import RunProgress, progress_callback

    with contextlib.redirect_stderr(io.StringIO()), RunProgress("run", enabled=True) as run:
        with run.step("reading", 0.4):
            pass
        with run.step("computing", 1.0), progress_callback(True, "kernel") as callback:
            callback(1, 2)
            assert run._bar.n == 700  # 0.4 + 0.6 / 2 of 1000
            callback(1, 4)  # a second kernel starting over never moves the bar back
            assert run._bar.n == 700
        assert run._bar.n == 1000


@pytest.mark.parametrize("piece_bytes", [1, 7, 64, 1 << 20])
def test_text_read_in_pieces_keeps_every_row(tmp_path, monkeypatch, piece_bytes):
    from pairmetrics import _io

    monkeypatch.setattr(_io, "_PIECE_BYTES", piece_bytes)
    values = np.random.default_rng(5).normal(size=(300, 3)) * 10.0 ** np.arange(-150, 150, 100)
    lines = [",".join(repr(float(v)) for v in row) for row in values]
    lines[100:100] = ["", ""]  # blank lines are skipped
    (tmp_path / "t.csv").write_text("a,b,c\r\n" + "\r\n".join(lines))  # no newline at the end
    np.testing.assert_array_equal(_io.load_array(tmp_path / "t.csv", ndim=2), values)
    lines[250] = "1,2"
    (tmp_path / "t.csv").write_text("a,b,c\n" + "\n".join(lines) + "\n")
    with pytest.raises(ValueError, match="line 252 has 2 fields, expected 3"):
        _io.load_array(tmp_path / "t.csv", ndim=2)
