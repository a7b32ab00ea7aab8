"""Test runs an agent can act on: TestRuns with hints, and the bugs.ndjson lifecycle (the tester role is in sprint)."""
