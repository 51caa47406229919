"""Keeping a collection in sync with a Source — a directory, a git working tree, an S3 prefix, a
website: a new source checked and added (adding.py), the files it holds now (files.py, with
s3_objects.py and web_pages.py, each giving a listings.Listing), and a sync run that ingests what
changed, renames what moved and deletes what is gone (runs.py)."""
