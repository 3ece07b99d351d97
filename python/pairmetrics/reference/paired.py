"""Reference paired evaluation."""
