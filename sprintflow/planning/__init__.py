"""The planner: a feature request becomes a PlanSpec and its SprintContracts."""
