"""tilewise test suite."""
