"""Route groups of the read API."""
