"""The ``@task`` units of sprintflow's DAGs: each is thin and calls one library function.

Flows in :mod:`sprintflow.flows` compose these; the logic lives in the domain
packages of :mod:`sprintflow`, so everything here can be read at a glance.
Every task that may meet an infrastructure failure retries with
:func:`~sprintflow.tasks.retries.retry_on_infrastructure`, and only then.
"""
