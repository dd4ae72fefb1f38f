"""Column layout of the per-measure parameter rows shared by Python and the kernels.

A batch of requested measures travels to the kernel as two small matrices:
``iparams`` (int64, one row per measure) and ``fparams`` (float64), plus the flat
``tables`` (float64: gain / probability tables by grade and per-rank weights) and
``itables`` (int64: grade orders for the ideal ranking).  Keeping the layout in one
module keeps the two tiers in step.
"""

# measure codes
P = 0
RECALL = 1
SUCCESS = 2
RR = 3
AP = 4
RPREC = 5
DCG = 6
NDCG = 7
ERR = 8
PFOUND = 9
SET = 10  # the set measures: SetP, SetR, SetF, SetAP, SetRelP (I_SET_KIND says which)
IPREC = 11  # interpolated precision at a recall level (F_PARAM)
JUDGMENTS = 12  # Bpref, infAP: over judgment codes (CODE_* below) in the labels' place; I_SET_KIND says which
CWL = 13  # the C/W/L walks (NERR8-NERR11, INST, BPM): I_CWL_KIND says which, F_PARAM holds p or T
COMPAT = 14  # Compat: rank-biased overlap with the ideal ranking (F_PARAM: p; F_OFFSET: 1 to normalise)
ACCURACY = 15  # Accuracy: the share of (relevant, non-relevant) pairs of the top k in the right order

# iparams columns
I_CODE = 0
I_K = 1  # cutoff, or -1 for the whole row
I_VALUE_MODE = 2  # how a label becomes a gain / probability (VALUE_* below)
I_VALUE_OFF = 3  # offset of the by-grade table in ``tables``
I_WEIGHT_OFF = 4  # offset of the per-rank weights (discount / utility / pLook decay / AP: 1/r)
I_WEIGHT_LEN = 5
I_DENOMINATOR = 6  # AP: 0 = min(k, R), 1 = R
I_ORDER_OFF = 7  # offset in ``itables`` of the grades sorted by gain, descending
I_N_GRADES = 8  # length of the by-grade table
I_CUM_OFF = 9  # nDCG: offset of the cumulative weights C[r] = w[0] + ... + w[r - 1], r = 0 .. len
I_N_IDEAL = 10  # nDCG: leading grades of the gain order that can change the ideal DCG
I_REL_KIND = 11  # how ``rel_labels[m]``, the threshold in the labels' own dtype, counts R (REL_*)
I_SET_KIND = 12  # SET: which set measure (SET_* below); JUDGMENTS: BPREF or INFAP
I_P_MIN_K_N = 13  # P: 1 to divide by min(k, n) instead of k (Judged@k, as ir_measures)
I_CWL_KIND = 14  # CWL: which continuation probability C_i (CWL_* below)
I_ZERO_WHEN_JUDGED = 15  # DCG (RBPResidual): 1 to give 0 when every document of the top d is judged (trec_eval)
N_ICOLS = 16

# I_REL_KIND values: label >= rel_labels[m] decides relevance, exactly
REL_NONE = 0  # no label can reach rel (R = 0)
REL_INTEGER = 1  # integer labels: rel_labels[m] = ceil(rel) (or the dtype's minimum)
REL_FLOAT = 2  # float labels: rel_labels[m] = the smallest value of the dtype >= rel

# fparams columns
F_REL = 0  # binary relevance threshold: label >= rel
F_EMPTY = 1  # value when the normaliser is 0 (no relevant document)
F_PARAM = 2  # a number of the measure's own: SetF's beta, IPrec's recall level, NERR10's p, T (INST, NERR11, BPM),
#             RBPResidual's p
F_OFFSET = 3  # IPrec: c = floor(level R + offset) relevant documents reach the level (0.9 or 0.5); Compat: normalize;
#              DCG: added to the sum (RBP's residual: 1 - RBP of the judged flags)
N_FCOLS = 4

# value modes
VALUE_TABLE = 0  # tables[off + grade]
VALUE_IDENTITY = 1  # the label itself (gain or probability)
VALUE_EXP2 = 2  # 2**label - 1 (float labels)

AP_MIN_K_R = 0
AP_R = 1

# I_SET_KIND values (h: relevant documents of the row, n: its documents, R: relevant documents of the query)
SET_P = 0  # h / n
SET_R = 1  # h / R
SET_F = 2  # (1 + beta) P R / (beta P + R)
SET_AP = 3  # h^2 / (n R)
SET_REL_P = 4  # h / min(n, R)
NUM_RET = 5  # n: the documents of the row
NUM_REL_RET = 6  # h
NUM_REL = 7  # R
NUM_Q = 8  # 1: the query itself

# JUDGMENTS: I_SET_KIND values, and the judgment code of each document (the batch's labels then)
BPREF = 0
INFAP = 1
CODE_UNJUDGED = 0  # outside the judging pool (trec_eval: not in the qrels)
CODE_POOLED = 1  # in the pool but left unjudged (trec_eval: judged below 0); infAP counts them
CODE_NONRELEVANT = 2  # judged, label < rel
CODE_RELEVANT = 3  # judged, label >= rel

# CWL: I_CWL_KIND values, the continuation probability C_i at rank i (g_i: the gain at i, CG_i: the gains up to i)
CWL_NERR8 = 0  # 1 - g_i
CWL_NERR9 = 1  # i / (i + 1) (1 - g_i)
CWL_NERR10 = 2  # p (1 - g_i)
CWL_NERR11 = 3  # ((i + 2T - 1) / (i + 2T))^2 (1 - g_i)
CWL_INST = 4  # ((x - 1) / x)^2, x = i + 2T - CG_i
CWL_BPM = 5  # 1 while CG_i < T, else 0
