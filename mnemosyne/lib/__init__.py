"""Infrastructure every layer may use, one module per concern: scope (the libraries and collection
a read covers, rendered for every store), metrics, tracing, outages (how a
failing dependency is told), replicas (read routing), request ids and the access log, allowed
hosts, outbound endpoints and addresses, uids, and the Python 3.11 shim. Nothing here imports the
engine or the MCP surface."""
