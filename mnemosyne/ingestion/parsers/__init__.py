"""One module per file format, each turning bytes into a `ParsedDocument`; see `parsing.py`."""
