"""The Larvatus job: options, Parquet schemas, the Beam graph and its entry point."""
