"""The history dataset: every evaluation as tidy Parquet rows, and the logs the reports read."""
