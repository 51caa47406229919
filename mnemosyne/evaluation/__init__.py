"""Evaluation: retrieval measures (measures, pure) and the BEIR harness (beir), which ingests a
dataset and searches it — so it sits above both search and ingestion."""
