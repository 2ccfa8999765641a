"""Data handling: input validation, column encoding, binarisation, demo datasets (each module
imported on first use)."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(__name__, {
    "Binarizer": ".binarize", "load_anneal": ".datasets", "load_demo": ".datasets",
    "Column": ".encoding", "FeatureEncoder": ".encoding",
    "check_sample_weight": ".validation", "encode_labels": ".validation",
})
