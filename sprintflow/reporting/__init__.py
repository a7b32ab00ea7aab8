"""Pure pandas analytics over the history, and the report built from them (HTML, CSV, Parquet, text)."""
