"""Deployment entry flows (flows.py), prefect.yaml and the automations: what `sprintflow serve` and workers run."""
