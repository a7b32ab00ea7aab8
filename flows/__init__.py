"""The Prefect flows: thin orchestration of the tasks in sprintflow.tasks (evaluate, sprint, plan, score, report)."""
