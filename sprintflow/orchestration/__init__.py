"""Prefect plumbing, below every role that runs in a flow.

* ``runs``: how a flow run ends (its state, verdict tags, links to its EvalResults);
* ``server`` and ``api``: the local Prefect server, and where a Prefect API is;
* ``concurrency``: slots of Prefect's global concurrency limits (a Docker host's containers,
  a workspace's deployment runs);
* ``postgres``: the PostgreSQL cluster of a team's server.
"""
