"""How a label becomes a number: gain, relevance probability, grade index."""
from rankjit._config import jit
from rankjit._kernels.layout import VALUE_IDENTITY, VALUE_TABLE


@jit(inline="always")
def label_value(label, mode, tables, off):
    """Gain (or probability) of one label under a value mode."""
    if mode == VALUE_TABLE:
        return tables[off + int(label)]  # by-grade table
    if mode == VALUE_IDENTITY:
        return float(label)  # the label is the gain / probability
    return 2.0 ** float(label) - 1.0  # exp2 gain for non-integer labels

