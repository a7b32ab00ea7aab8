"""Judge a workspace against a contract.

Strategies run by executors, reports parsed once, criteria, feedback and the EvalResult.
"""
