"""Data handling: input validation, column encoding, binarisation, demo datasets."""

from .binarize import Binarizer
from .datasets import load_anneal, load_demo
from .encoding import Column, FeatureEncoder
from .validation import check_sample_weight, encode_labels

__all__ = ["Binarizer", "Column", "FeatureEncoder", "check_sample_weight", "encode_labels",
           "load_anneal", "load_demo"]
