"""The transaction coordinator (``TransactionCoordinator``, ``TransactionMetadata``, ``TransactionStateManager``)."""
