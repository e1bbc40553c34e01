"""Parley's wake word training and evaluation (README: training/bin/train-wake.sh)."""
