"""Stdlib-only scripts that run beside the code under test (inside the container or on the host)."""
