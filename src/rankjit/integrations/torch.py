"""PyTorch adapter: rankjit measures on padded ``[batch, slate]`` tensors.

Follows allRank's layout: one query per row, documents along the slate, padding
marked by the label ``-1`` (or by an explicit boolean ``mask``, True = real
document).  Metrics only: no gradients flow, and a CPU tensor is read in place
(``tensor.detach().numpy()`` shares memory).  A CUDA tensor is copied to the host,
which is the one copy that cannot be avoided.  NumPy arrays are accepted as well.

Examples
--------
>>> import numpy as np
>>> from rankjit.integrations.torch import evaluate
>>> scores = np.array([[0.9, 0.2, 0.5], [0.1, 0.8, 0.0]])
>>> labels = np.array([[1, 0, 2], [0, 1, -1]])        # -1 pads the second slate
>>> res = evaluate(scores, labels, ["nDCG@2", "RR"], per_query=True)
>>> res["RR"].tolist()
[1.0, 1.0]
"""
from __future__ import annotations

import numpy as np

from rankjit import presets

__all__ = ["evaluate", "PADDED_Y_VALUE"]

#: allRank's padding label
PADDED_Y_VALUE = -1


def _to_numpy(x, name):
    """A NumPy view of a tensor (no copy on CPU) or the array itself."""
    if isinstance(x, np.ndarray):
        return x, False
    if hasattr(x, "detach") and hasattr(x, "numpy"):  # torch.Tensor, without importing torch
        t = x.detach()
        if getattr(t, "device", None) is not None and t.device.type != "cpu":
            t = t.cpu()  # the one unavoidable copy
        if getattr(t, "dtype", None) is not None and str(t.dtype) in ("torch.bfloat16", "torch.float16"):
            t = t.float()
        return t.numpy(), True
    if isinstance(x, (list, tuple)):
        return np.asarray(x), False
    raise TypeError(f"{name} must be a torch.Tensor or a NumPy array, got {type(x).__name__}")


def evaluate(scores, labels, measures, *, mask=None, compat=None, padding_value=PADDED_Y_VALUE, per_query=False,
             **kwargs):
    """Compute rankjit measures on a padded batch of slates.

    Parameters
    ----------
    scores : torch.Tensor or ndarray, shape [batch, slate]
        Model outputs (any float dtype; float32/float64 are read without a copy).
    labels : torch.Tensor or ndarray, shape [batch, slate]
        Relevance labels; ``padding_value`` (-1) marks padding.
    measures : str or sequence of str
        Measure names of :func:`rankjit.evaluate`.
    mask : torch.Tensor or ndarray of bool, shape [batch, slate], optional
        True for real documents.  Default: ``labels != padding_value``.  With an
        explicit mask, labels of masked-out cells are ignored.
    compat : str, optional
        Parity preset (see :mod:`rankjit.presets`).
    padding_value : number, default -1
        Label value of padded cells (used when ``mask`` is not given).
    per_query : bool, default False
        Return per-query values instead of means.
    **kwargs
        Passed on to :func:`rankjit.evaluate` (``ties=``, ``rel=``, ...).

    Returns
    -------
    dict
        Measure name -> float mean, or with ``per_query=True`` a per-query float64
        array (a CPU ``torch.Tensor`` sharing its memory when the inputs were tensors).

    Raises
    ------
    ValueError
        When ``scores`` / ``labels`` / ``mask`` are not 2-D ``[batch, slate]`` of one shape.

    Examples
    --------
    >>> import numpy as np
    >>> from rankjit.integrations.torch import evaluate
    >>> evaluate(np.array([[3., 2., 1.]]), np.array([[0, 1, -1]]), "P@2")
    {'P@2': 0.5}
    """
    from rankjit._validation import number

    padding_value = number(padding_value, "padding_value")
    s, s_torch = _to_numpy(scores, "scores")
    y, y_torch = _to_numpy(labels, "labels")
    for name, a in (("scores", s), ("labels", y)):
        if a.ndim != 2:
            raise ValueError(f"{name} must be a 2-D [batch, slate] tensor, got {a.ndim} dimension(s) with shape "
                             f"{tuple(a.shape)}")
    if s.shape != y.shape:
        raise ValueError(f"scores and labels must have the same [batch, slate] shape, got {tuple(s.shape)} and "
                         f"{tuple(y.shape)}")
    if mask is None:
        m = y != padding_value
    else:
        m, _ = _to_numpy(mask, "mask")
        if m.ndim != 2 or m.shape != y.shape:
            raise ValueError(f"mask must be a [batch, slate] boolean tensor of shape {tuple(y.shape)}, got shape "
                             f"{tuple(m.shape)}")
        if m.dtype != np.bool_:
            raise TypeError(f"mask must be boolean (True = real document), got dtype {m.dtype}")
    if s.dtype not in (np.float32, np.float64):
        s = s.astype(np.float64)
    res = presets.evaluate(y, s, measures, compat=compat, mask=m, per_query=per_query, **kwargs)
    if per_query and (s_torch or y_torch):
        import torch

        return {k: torch.from_numpy(v) for k, v in res.items()}
    return res
