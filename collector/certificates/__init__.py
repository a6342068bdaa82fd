"""Signed certificates of what the collector observed (docs/certificates.md).

Pure parts only, no database: canonical JSON (RFC 8785) and digests, the
Ed25519 signing key and its file, DSSE envelopes of in-toto statements, the
log's hash chain, and the verifier `badge-collector verify` runs. Storing,
issuing and the log's rows are collector.storage.certificates'.
"""
