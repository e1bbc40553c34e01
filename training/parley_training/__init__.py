"""Parley's training and evaluation (training/README.md): the wake models'
training (training/bin/train-wake.sh, train-wake-kws.sh) and the modules the
evaluation drivers in training/bin run."""
