"""Authorization of transactions and the adversaries it must stop (KIP-98 §9)."""
