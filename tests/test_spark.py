"""pairmetrics.spark on a real local Spark: the in-memory numbers, MLlib's exact numbers, per group, and the same
number after a task failure that Spark retries."""

import shutil
import subprocess
import sys
import warnings

import numpy as np
import pairmetrics as pm
import pytest
from pairmetrics.lifelines import concordance_index as lifelines_concordance
from pairmetrics.sklearn import roc_auc_score as in_memory_auc

if shutil.which("java") is None:
    pytest.skip("Spark needs Java, and no java is on the PATH", allow_module_level=True)
pyspark = pytest.importorskip("pyspark", minversion="3.5", reason="pyspark >= 3.5 is not installed (extra 'spark')")
pytest.importorskip("pyarrow", reason="pyspark's Arrow exchange needs pyarrow")
pd = pytest.importorskip("pandas", reason="per-group results run applyInPandas")
sklearn_metrics = pytest.importorskip("sklearn.metrics")

from pairmetrics import spark as pms  # noqa: E402

pytestmark = pytest.mark.xdist_group("spark")
N = 3000


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    # local[2, 3]: two cores, a failed task is tried up to three times
    session = (
        SparkSession.builder.master("local[2, 3]")
        .appName("pairmetrics-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def data():
    """Skewed scores with many ties (a calibrated model's probabilities near 0, rounded), groups, weights,
    survival times with ties and censoring."""
    rng = np.random.default_rng(3)
    label = (rng.random(N) < 0.2).astype(np.int64)
    score = np.round(rng.beta(0.6, 6, N) + 0.15 * label, 3)
    weight = rng.choice([0.0, 0.5, 1.0, 3.0], N)
    group = rng.choice(["a", "b", "c", "d", "e"], N)
    group[group == "e"] = np.where(label[group == "e"] == 1, "f", "e")  # groups of one class
    time = rng.integers(1, 60, N).astype(np.float64)
    event = (rng.random(N) < 0.7).astype(np.int64)
    return {"label": label, "score": score, "weight": weight, "group": group, "time": time, "event": event}


@pytest.fixture(scope="module")
def frame(spark, data):
    table = pd.DataFrame(data)
    cached = spark.createDataFrame(table).repartition(3).cache()
    cached.count()
    yield cached
    cached.unpersist()


def test_roc_auc_and_delong_interval_equal_the_in_memory_ones(frame, data):
    result = pms.roc_auc_score(frame, label_col="label", score_col="score")
    assert result.auc == pytest.approx(in_memory_auc(data["label"], data["score"]), abs=1e-12)
    low, high = pm.paired_evaluation(data["label"], data["score"], variance=True).confidence_interval()
    ours = result.confidence_interval()
    assert (ours.low, ours.high) == pytest.approx((low, high), abs=1e-9)
    assert (result.n_positive, result.n_negative) == (data["label"].sum(), N - data["label"].sum())
    weighted = pms.roc_auc_score(frame, label_col="label", score_col="score", weight_col="weight")
    expected = in_memory_auc(data["label"], data["score"], sample_weight=data["weight"])
    assert weighted.auc == pytest.approx(expected, abs=1e-12)


def test_average_precision_equals_scikit_learn(frame, data):
    for weight in (None, "weight"):
        w = None if weight is None else data[weight]
        ours = pms.average_precision_score(frame, label_col="label", score_col="score", weight_col=weight)
        assert ours == pytest.approx(
            sklearn_metrics.average_precision_score(data["label"], data["score"], sample_weight=w), abs=1e-12
        )


def test_evaluator_equals_mllib_exact_mode(spark, frame):
    from pyspark.ml.evaluation import BinaryClassificationEvaluator as MLlib
    from pyspark.ml.functions import array_to_vector
    from pyspark.sql import functions as F

    vectors = frame.withColumn("raw", array_to_vector(F.array(1 - F.col("score"), F.col("score"))))
    for column, weight, metric in [("raw", "weight", "areaUnderROC"), ("score", None, "areaUnderPR")]:
        options = {"rawPredictionCol": column, "labelCol": "label", "metricName": metric}
        if weight:
            options["weightCol"] = weight
        ours = pms.BinaryClassificationEvaluator(**options).evaluate(vectors)
        exact = MLlib(numBins=0, **options).evaluate(vectors)
        assert ours == pytest.approx(exact, abs=1e-9), (column, weight, metric)
    evaluator = pms.BinaryClassificationEvaluator(rawPredictionCol="score", numBins=7)
    assert isinstance(evaluator, MLlib) and evaluator.getNumBins() == 7 and evaluator.isLargerBetter()
    assert evaluator.copy({evaluator.metricName: "areaUnderPR"}).getMetricName() == "areaUnderPR"


def test_concordance_equals_lifelines(frame, data):
    ours = pms.concordance_index(frame, time_col="time", score_col="score", event_col="event")
    assert ours == pytest.approx(lifelines_concordance(data["time"], data["score"], data["event"]), abs=1e-12)
    everyone = pms.concordance_index(frame, time_col="time", score_col="score")
    assert everyone == pytest.approx(lifelines_concordance(data["time"], data["score"]), abs=1e-12)


@pytest.mark.parametrize("column", ["time", "score", "event"])
def test_concordance_refuses_nan_and_null_as_lifelines(spark, column):
    table = pd.DataFrame({"time": [1.0, 2.0, 3.0, 4.0], "score": [1.0, 3.0, 2.0, 4.0], "event": [1.0, 1.0, 0.0, 1.0]})
    for bad in (np.nan, None):
        rows = table.astype(object)
        rows.loc[2, column] = bad
        frame = spark.createDataFrame(rows.astype(float).where(rows.notna(), None))
        with pytest.raises(ValueError, match="NaNs detected in inputs"):
            pms.concordance_index(frame, time_col="time", score_col="score", event_col="event")


def test_per_group_results(frame, data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = in_memory_auc(data["label"], data["score"], groups=data["group"])
        rows = pms.roc_auc_score(frame, label_col="label", score_col="score", groups_col="group").toPandas()
    rows = rows.sort_values("group").reset_index(drop=True)
    assert rows["group"].tolist() == expected.groups.tolist()
    np.testing.assert_allclose(rows["auc"], expected.auc, rtol=0, atol=1e-12)
    assert rows["n_positive"].tolist() == expected.n_positive.tolist()
    first = data["group"] == "a"
    low, high = pm.paired_evaluation(data["label"][first], data["score"][first], variance=True).confidence_interval()
    variance = rows["variance"][0]
    half = 1.959963984540054 * np.sqrt(variance)
    assert (rows["auc"][0] - half, rows["auc"][0] + half) == pytest.approx((low, high), abs=1e-9)
    ap = pms.average_precision_score(frame, label_col="label", score_col="score", groups_col="group").toPandas()
    ap = ap.set_index("group")
    assert ap.loc["b", "average_precision"] == pytest.approx(
        sklearn_metrics.average_precision_score(
            data["label"][data["group"] == "b"], data["score"][data["group"] == "b"]
        ),
        abs=1e-12,
    )
    assert np.isnan(ap.loc["e", "average_precision"])  # no positives in group e


def test_a_retried_task_gives_the_same_number(spark, frame, data):
    from pyspark import TaskContext
    from pyspark.sql import functions as F
    from pyspark.sql.types import DoubleType

    def flaky(score):
        context = TaskContext.get()
        if context.partitionId() == 0 and context.attemptNumber() == 0:
            raise RuntimeError("a worker lost on its first attempt")
        return score

    failing = frame.withColumn("score", F.udf(flaky, DoubleType())("score"))
    result = pms.roc_auc_score(failing, label_col="label", score_col="score")
    assert result.auc == pytest.approx(in_memory_auc(data["label"], data["score"]), abs=1e-12)


def test_bad_columns_are_refused(frame):
    with pytest.raises(ValueError, match="nothere"):
        pms.roc_auc_score(frame, label_col="nothere", score_col="score")
    with pytest.raises(TypeError, match="group"):
        pms.roc_auc_score(frame, label_col="label", score_col="group")


def test_import_pairmetrics_loads_no_pyspark():
    code = "import sys, pairmetrics; print('pyspark' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.stdout.strip() == "False", run.stderr
