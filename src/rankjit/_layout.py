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
N_ICOLS = 12

# I_REL_KIND values: label >= rel_labels[m] decides relevance, exactly
REL_NONE = 0  # no label can reach rel (R = 0)
REL_INTEGER = 1  # integer labels: rel_labels[m] = ceil(rel) (or the dtype's minimum)
REL_FLOAT = 2  # float labels: rel_labels[m] = the smallest value of the dtype >= rel

# fparams columns
F_REL = 0  # binary relevance threshold: label >= rel
F_EMPTY = 1  # value when the normaliser is 0 (no relevant document)
N_FCOLS = 2

# value modes
VALUE_TABLE = 0  # tables[off + grade]
VALUE_IDENTITY = 1  # the label itself (gain or probability)
VALUE_EXP2 = 2  # 2**label - 1 (float labels)

AP_MIN_K_R = 0
AP_R = 1
