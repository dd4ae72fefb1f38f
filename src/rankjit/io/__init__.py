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
from rankjit.io._align import AlignedRun, align, evaluate_run
