"""Stdlib-only scripts the executors carry beside the code under test.

Mounted read-only in a container, read in place on the host: the API check, the Python
mutation runner and its pytest plugin, Stryker's function grouping.
"""
