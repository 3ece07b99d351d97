import os

from hypothesis import HealthCheck, settings

# CI runs the full example counts; set HYPOTHESIS_PROFILE=dev for quicker local runs.
settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
