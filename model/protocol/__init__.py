"""Kafka's wire protocol as the model uses it: error codes (``Errors``) and request/response records."""
