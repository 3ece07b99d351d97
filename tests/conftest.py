import os

from _hypothesis_budget import QUICK_CAP
from hypothesis import HealthCheck, settings

# CI runs the full example counts; set HYPOTHESIS_PROFILE=dev for quicker local runs.
settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=QUICK_CAP, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
