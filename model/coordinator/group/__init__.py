"""The group coordinator: consumer groups and their committed offsets (``__consumer_offsets``)."""
