"""The partition leader's log (Kafka's ``UnifiedLog``).

Appends and the high watermark, the producer state table (``ProducerStateManager``) and control batches.
"""
