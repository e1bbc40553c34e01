"""The repository around the package, for the modules that read its files:
ROOT (the checkout), and the product's own noise maker, which
scripts/adapt-model.sh runs as well (so it stays in scripts/adapt)."""
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def make_noises():
    """scripts/adapt/make-noises.py as a module (write_wav, the synthetic
    training noises)."""
    spec = importlib.util.spec_from_file_location("make_noises", os.path.join(ROOT, "scripts", "adapt", "make-noises.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
