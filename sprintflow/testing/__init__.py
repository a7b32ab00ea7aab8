"""Test runs an agent can act on: TestRuns with hints, the bugs.ndjson lifecycle, and the tester role."""
