"""Real inputs: TREC runs and qrels, Arrow/Parquet, pandas, polars, LETOR files.

The public names are loaded on first use (PEP 562 module attributes): importing
``rankjit.io._trec`` to read a TREC file does not import the Arrow, pandas or
LETOR readers.
"""
from __future__ import annotations

from rankjit._lazy import lazy_names

#: public name -> module that defines it
_PUBLIC = {
    "StringColumn": "rankjit.io._trec",
    "TrecRun": "rankjit.io._trec",
    "TrecQrels": "rankjit.io._trec",
    "DiversityQrels": "rankjit.io._trec",
    "read_trec_run": "rankjit.io._trec",
    "read_trec_qrels": "rankjit.io._trec",
    "read_diversity_qrels": "rankjit.io._trec",
    "AlignedRun": "rankjit.io._align",
    "align": "rankjit.io._align",
    "AlignedDiversity": "rankjit.io._align",
    "align_diversity": "rankjit.io._align",
    "evaluate_run": "rankjit.io._align",
    "RaggedBatch": "rankjit.io._frames",
    "from_arrow": "rankjit.io._frames",
    "from_pandas": "rankjit.io._frames",
    "from_polars": "rankjit.io._frames",
    "read_parquet": "rankjit.io._frames",
    "evaluate_frame": "rankjit.io._frames",
    "read_letor": "rankjit.io._letor",
    "read_scores": "rankjit.io._letor",
    "read_group_sizes": "rankjit.io._letor",
}

__all__ = list(_PUBLIC)


__getattr__, __dir__ = lazy_names("rankjit.io", _PUBLIC, globals())
