"""The two ways a request body can fail to decode; the collector maps them."""


class DecodeError(ValueError):
    """The bytes are not a readable OTLP request (HTTP 400 / INVALID_ARGUMENT)."""


class TooLarge(ValueError):
    """The request is over a size limit (HTTP 413 / RESOURCE_EXHAUSTED)."""
