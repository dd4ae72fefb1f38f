"""The LightGBM lambdarank sample of ../shared/data, shared by the adapter tests."""
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "lightgbm_lambdarank"


def load(split):
    """(X sparse, y, group sizes) of rank.<split>; skips the test when the data is absent."""
    if not (DATA / f"rank.{split}").exists():
        pytest.skip(f"LightGBM lambdarank sample data not found at {DATA} (shared data folder absent)")
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(str(DATA / f"rank.{split}"))
    group = np.loadtxt(DATA / f"rank.{split}.query", dtype=np.int64)
    return X, y, group
