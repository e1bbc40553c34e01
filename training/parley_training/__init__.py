"""Parley's wake word training and evaluation (README: scripts/train-wake.sh)."""
