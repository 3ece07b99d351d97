import pairmetrics


def test_package_imports_and_exposes_version():
    assert pairmetrics.__version__
    assert hasattr(pairmetrics, "_core")
