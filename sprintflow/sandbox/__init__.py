"""The container images strategies run in, built locally with no registry."""
