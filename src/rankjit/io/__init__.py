"""Real inputs: TREC runs and qrels, Arrow/Parquet, pandas, polars, LETOR files."""
from rankjit.io._trec import (
    DiversityQrels,
    StringColumn,
    TrecQrels,
    TrecRun,
    read_diversity_qrels,
    read_trec_qrels,
    read_trec_run,
)
from rankjit.io._align import AlignedDiversity, AlignedRun, align, align_diversity, evaluate_run
from rankjit.io._frames import RaggedBatch, evaluate_frame, from_arrow, from_pandas, from_polars, read_parquet
from rankjit.io._letor import read_group_sizes, read_letor, read_scores

__all__ = [
    "StringColumn", "TrecRun", "TrecQrels", "DiversityQrels", "read_trec_run", "read_trec_qrels",
    "read_diversity_qrels", "AlignedRun", "align", "AlignedDiversity", "align_diversity", "evaluate_run", "RaggedBatch", "from_arrow",
    "from_pandas", "from_polars", "read_parquet", "evaluate_frame", "read_letor", "read_scores",
    "read_group_sizes",
]
