"""Common checks run on every list-measure family of the registry (``rankjit._registry``).

In the spirit of scikit-learn's common estimator checks: every test here is parametrized
over :data:`rankjit._registry.LIST_FAMILIES` (ids = family names), never over a list of
families written by hand, so a family added to the registry is tested by every check
without new tests.  Expected values come from ``tests/reference/`` (``reference.lists``: plain
Python written from the definitions, ranking with the one tie rule of ``reference.ties``) or from
another call path of rankjit, never from values rankjit printed once.

Checks:

1. names: the family name and every alias, as given, lower and upper case, with and
   without a cutoff (a cutoff refused, naming the family, when the family takes none),
   parse to the family and give the same values in ``evaluate``;
2. parameters: defaults pass ``Param.check``; values of the wrong kind (derived from the
   parameter's kind, :data:`rankjit._registry.KINDS`) are refused with a TypeError /
   ValueError naming the parameter and the measure; an unknown parameter is refused
   naming the valid ones; valid non-default values (one parameter, and two at a time)
   agree with the reference; call-level defaults of ``evaluate`` (``rel=``, ``empty=``)
   act as the same parameter in the name, which wins over them;
3. the reference: random ragged batches (empty rows, rows shorter than the cutoff, ties),
   every tie rule ("average" refused, naming the family, for the cascade group);
4. layouts: dense, padded by ``lengths=`` / ``mask=`` (garbage in the padding) and ragged
   ``offsets=`` give bitwise identical values; so does ``evaluate_systems``;
5. means: ``per_query=False`` is the mean of the per-query values;
6. dtypes: every label dtype holding the same grades and float32 / float64 scores holding
   the same values give bitwise identical values;
7. invariances: permuting the documents of a row (distinct scores) changes nothing;
   appending label-0 documents below every score changes a family's values exactly where
   the reference says it does; values are >= 0, and <= 1 when the reference bounds the
   family by 1 (always so for a family normalised by ``empty=``).

That every family is named in ``docs/metrics.md`` and implemented by the reference is
checked by ``tests/test_registry.py``.
"""
from __future__ import annotations

import inspect
import itertools
import math
import re

import numpy as np
import pytest
import reference as ref  # tests/ is on sys.path (conftest.py)

import rankjit
from rankjit import _measures
from rankjit._registry import GROUPS, KINDS, LIST_FAMILIES

FAMILIES = LIST_FAMILIES
IDS = [f.name for f in FAMILIES]
TIES = ("pessimistic", "optimistic", "stable", "average")
TOL = {"rtol": 1e-12, "atol": 1e-12, "equal_nan": True}
MAX_GRADE = 4  # labels of the random batches are integer grades 0..MAX_GRADE
GRADE_P = np.array([0.45, 0.25, 0.15, 0.1, 0.05])

LABEL_DTYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.float32, np.float64)
SCORE_DTYPES = (np.float32, np.float64)


# ------------------------------------------------------------------------------------------
# helpers


def average_refused(family):
    """The cascade group and IPrec have no closed-form expectation over tied orders (docs/metrics.md)."""
    return not family.ties_average


def valid_ties(family):
    return [t for t in TIES if not (t == "average" and average_refused(family))]


def family_ties():
    return [pytest.param(f, t, id=f"{f.name}-{t}") for f in FAMILIES for t in valid_ties(f)]


def cutoffs(family):
    """None (the whole row), 1, one inside most rows, and one beyond every row of the batches."""
    return [None, 1, 3, 12] if family.takes_k else [None]


def fmt(value):
    """A parameter value as a literal of the measure grammar."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    return repr(value)


def required(family):
    """Values for the parameters that have no default (IPrec's recall, max_rel): one of their valid values."""
    return {p.name: VALID[p.kind](p)[1] for p in family.params if p.required}


def text(family, k=None, /, _spelling=None, **params):
    """The measure string ``Name(p=v, ...)@k`` (``_spelling`` for another spelling of the name).

    A parameter without a default (:func:`required`) is added unless given.
    """
    params = {**required(family), **params}
    out = _spelling or family.name
    if params:
        out += "(" + ", ".join(f"{n}={fmt(v)}" for n, v in params.items()) + ")"
    return out if k is None else f"{out}@{k}"


def make_rows(seed, n_q=14, max_len=7, max_grade=MAX_GRADE, distinct=False):
    """Random queries as (labels list, scores list), the real documents in input order.

    Always holds an empty row, a one-document row, a row without relevant documents and a
    row whose scores are all equal; scores are multiples of 1/4 (exact in float32), drawn
    from a small pool (ties) unless ``distinct``.  Rows of at most 7 documents keep the
    brute-force "average" reference cheap.
    """
    rng = np.random.default_rng(seed)
    p = GRADE_P[: max_grade + 1] / GRADE_P[: max_grade + 1].sum()
    rows = []
    for q in range(n_q):
        n = [0, 1, max_len, max_len][q] if q < 4 else int(rng.integers(0, max_len + 1))
        ys = rng.choice(max_grade + 1, size=n, p=p)
        if q == 2 or rng.random() < 0.15:
            ys[:] = 0
        if distinct:
            ss = (rng.permutation(4 * max_len)[:n] - 2 * max_len) / 4.0
        elif q == 3:
            ss = np.full(n, 1.5)
        else:
            ss = rng.integers(-2, 3, size=n) / 4.0
        rows.append(([int(y) for y in ys], [float(s) for s in ss]))
    return rows


def expected(family, rows, k=None, ties="pessimistic", **params):
    """Per-query values of the reference (with the values of :func:`required` unless given)."""
    params = {**required(family), **params}
    # (run() passes judged=: the reference's unjudged documents too, which gain nothing whatever grade 0 is worth)
    return np.array([ref.measure(family.name, ys, ss, k, ties, unjudged_none=True, **params) for ys, ss in rows],
                    dtype=np.float64)


def ragged(rows, label_dtype=np.int64, score_dtype=np.float64):
    """(labels, scores, {"offsets": ...}) of a ragged batch."""
    lens = [len(ys) for ys, _ in rows]
    labels = np.array([y for ys, _ in rows for y in ys], dtype=label_dtype)
    scores = np.array([s for _, ss in rows for s in ss], dtype=score_dtype)
    return labels, scores, {"offsets": np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)}


def garbage_label(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.nan
    return np.iinfo(dtype).max if dtype.kind == "u" else -7


def padded(rows, how, label_dtype=np.int64, score_dtype=np.float64, seed=0, extra=2):
    """(labels, scores, layout) of a padded batch: ``how`` is "lengths" or "mask"; garbage in the padding."""
    rng = np.random.default_rng(seed)
    lens = np.array([len(ys) for ys, _ in rows], dtype=np.int64)
    width = int(lens.max(initial=0)) + extra
    labels = np.full((len(rows), width), garbage_label(label_dtype), dtype=label_dtype)
    scores = np.full((len(rows), width), np.nan, dtype=score_dtype)
    mask = np.zeros((len(rows), width), dtype=bool)
    for q, (ys, ss) in enumerate(rows):
        pos = np.sort(rng.choice(width, size=len(ys), replace=False)) if how == "mask" else np.arange(len(ys))
        labels[q, pos] = ys
        scores[q, pos] = ss
        mask[q, pos] = True
    return labels, scores, ({"lengths": lens} if how == "lengths" else {"mask": mask})


def run(labels, scores, names, layout, ties="pessimistic", **kw):
    return rankjit.evaluate(labels, scores, names, ties=ties, per_query=True, **layout, **judged_kw(labels, scores),
                            **kw)


def judged_kw(labels, scores):
    """``judged=``: the reference's flags (:func:`reference.harness_judged`), read by Judged@k, Bpref, infAP and the
    measures that give grade 0 a value (``P(rel=0)``, gain arrays with ``gain[0] != 0``, ...): :func:`expected`."""
    flags = (np.asarray(labels) > 0) | (np.asarray(scores) >= 0)
    return {"judged": flags}


# ---- parameter values derived from the kinds ----------------------------------------------

#: two 1-D arrays a "choice_or_array" parameter takes (gains by grade / weights by rank): one
#: with a zero first entry, one without; long enough for grades 0..MAX_GRADE
ARRAYS = ([0.0, 1.0, 0.5, 2.0, 3.0], [0.25, 1.0, 0.0, 3.0, 2.0])
PROBABILITY_ARRAYS = ([0.0, 0.2, 0.4, 0.7, 1.0], [0.1, 0.0, 1.0, 0.5, 0.3])

#: valid values of each kind (labels of the batches go up to MAX_GRADE); a kind "<kind>_or_none"
#: not listed takes those of <kind> and None (see :func:`_derive_or_none`)
VALID = {
    "threshold": lambda p: [0, 0.5, 2, 3, 5],
    "number": lambda p: [1.5, 3, 10.0],
    "unit": lambda p: [0.0, 0.5, 1.0],
    "non_negative": lambda p: [0.0, 0.5, 1, 2.0],
    "positive_int": lambda p: [MAX_GRADE, MAX_GRADE + 1, MAX_GRADE + 3],
    "flag": lambda p: [True, False],
    "choice": lambda p: list(p.choices),
    "choice_or_array": lambda p: list(p.choices) + list(ARRAYS),
    "probabilities_or_none": lambda p: [None, *PROBABILITY_ARRAYS],
    "gain_map_or_none": lambda p: [None, {0: 0.0, 1: 1.0, 2: 3.0}, {1: 2.5, 3: 0.0}, {}],
    # max_rel (required; the second value is the one the tests give): at MAX_GRADE, above it, below it; min_rel:
    # its default 0 and values below the required max_rel (min_rel=3.5, max_rel=2.5 is refused as a pair)
    "grade_bound": lambda p: [4, 6, 2.5] if p.required else [0, 1, 2, 3.5],
    "positive": lambda p: [0.25, 1, 2.5, 1e3],
}

#: values of the wrong type or out of range, by kind: (value, what it is)
_WRONG_TYPE = [("abc", "a string"), ({"a": 1}, "a dict"), ([[1, 2], [3, 4]], "a nested list"), (None, "None")]
BAD = {
    "threshold": [(True, "a boolean"), (False, "a boolean"), *_WRONG_TYPE, ([1, 2], "a list"), (math.inf, "inf"),
                  (math.nan, "NaN")],
    "number": [(True, "a boolean"), *_WRONG_TYPE, ([1, 2], "a list")],
    "unit": [(True, "a boolean"), *_WRONG_TYPE, (-0.5, "below 0"), (1.5, "above 1"), (math.nan, "NaN")],
    "non_negative": [(True, "a boolean"), *_WRONG_TYPE, ([1, 2], "a list"), (-0.5, "below 0"), (math.nan, "NaN"),
                     (math.inf, "inf")],
    "positive_int": [(True, "a boolean"), *_WRONG_TYPE, (0, "zero"), (-2, "negative"), (2.5, "a fraction")],
    "flag": [(1, "an int"), (0.0, "a float"), *_WRONG_TYPE],
    "choice": [(True, "a boolean"), ("no-such-choice", "an unknown string"), (1, "a number"), ({"a": 1}, "a dict"),
               ([[1, 2], [3, 4]], "a nested list"), (None, "None")],
    "choice_or_array": [(True, "a boolean"), ("no-such-choice", "an unknown string"), (1.0, "a number"),
                        ({"a": 1}, "a dict"), ([[1.0, 2.0], [3.0, 4.0]], "a nested list"), ([], "an empty list"),
                        ([1.0, math.inf], "a non-finite entry"), (None, "None")],
    "gain_map_or_none": [(True, "a boolean"), ("abc", "a string"), ([1, 2], "a list"), ({-1: 1.0}, "a negative grade"),
                 ({1.5: 1.0}, "a fractional grade"), ({True: 1.0}, "a boolean grade"), ({1: math.nan}, "a NaN gain"),
                 ({1: "x"}, "a string gain"), ({1: True}, "a boolean gain")],
    "probabilities_or_none": [(True, "a boolean"), ("abc", "a string"), ({"a": 1}, "a dict"),
                              ([[0.1, 0.2]], "a nested list"), ([0.5, 1.5], "a probability above 1"),
                              ([-0.1, 0.5], "a negative probability"), (0.5, "a number")],
    "grade_bound": [(True, "a boolean"), *_WRONG_TYPE, ([1, 2], "a list"), (-1, "below 0"), (-0.5, "below 0"),
                    (math.nan, "NaN"), (math.inf, "inf")],
    "positive": [(True, "a boolean"), *_WRONG_TYPE, ([1, 2], "a list"), (0, "zero"), (-1.0, "below 0"),
                 (math.nan, "NaN"), (math.inf, "inf")],
}


def _derive_or_none():
    """Values of the kinds "<kind>_or_none" not listed above: those of <kind>, and None (valid)."""
    for kind in KINDS:
        base = kind[: -len("_or_none")] if kind.endswith("_or_none") else None
        if kind in VALID or base not in VALID:
            continue
        VALID[kind] = lambda p, base=base: [None, *VALID[base](p)]
        BAD[kind] = [(v, what) for v, what in BAD[base] if v is not None]


_derive_or_none()


def literal(value):
    """True when ``value`` can be written in a measure string (the grammar reads Python literals)."""
    try:
        return _literal_roundtrip(value)
    except (ValueError, SyntaxError):
        return False


def _literal_roundtrip(value):
    import ast

    back = ast.literal_eval(repr(value))
    return repr(back) == repr(value)


def all_params():
    return [pytest.param(f, p, id=f"{f.name}-{p.name}") for f in FAMILIES for p in f.params]


def non_default(param):
    """The valid values of ``param`` other than its default (arrays compared by value)."""
    out = []
    for v in VALID[param.kind](param):
        if isinstance(v, list) or isinstance(param.default, list):
            same = False
        else:
            same = v == param.default and type(v) is type(param.default)
        if param.kind == "choice" and param.default is None and v == param.choices[0]:
            same = True  # None means the first choice
        if not same:
            out.append(v)
    return out


# ------------------------------------------------------------------------------------------
# 0. the registry records themselves


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_record_is_well_formed(family):
    assert family.group in GROUPS
    assert [f.name for f in FAMILIES].count(family.name) == 1
    assert family.name == family.name.strip() and family.name
    for alias in family.aliases:
        assert alias == alias.lower(), f"aliases are lower case: {alias!r}"
    names = [p.name for p in family.params]
    assert len(names) == len(set(names))
    for p in family.params:
        assert p.kind in KINDS, p
        assert p.kind in VALID and p.kind in BAD, f"kind {p.kind!r} has no valid / bad values in this module"
        if p.kind in ("choice", "choice_or_array"):
            assert p.choices, p
    # the reference takes every parameter under the registry's name
    accepted = inspect.signature(ref.measure_on_ranking).parameters
    if any(a.kind is inspect.Parameter.VAR_KEYWORD for a in accepted.values()):
        return
    missing = [p.name for p in family.params if p.name not in accepted]
    assert not missing, f"tests/reference/lists.py's measure_on_ranking takes no {missing}"


def test_every_kind_has_values_here():
    # a new kind must come with its valid and bad values in this module
    assert set(VALID) == set(KINDS) == set(BAD)


# ------------------------------------------------------------------------------------------
# 1. names


def spellings(family):
    out = []
    for base in (family.name, *family.aliases):
        for s in (base, base.lower(), base.upper()):
            if s not in out:
                out.append(s)
    if family.ir_measures and family.ir_measures not in out:
        out.append(family.ir_measures)
    return out


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_every_spelling_names_the_family(family):
    rows = make_rows(1)
    labels, scores, layout = ragged(rows)
    names = []
    for s in spellings(family):
        for k in ([None, 3] if family.takes_k else [None]):
            t = text(family, k, _spelling=s)
            m = _measures.parse(t)
            assert (m.family, m.k) == (family.name, k), t
            names.append(t)
    res = run(labels, scores, names, layout)
    ks = [None, 3] if family.takes_k else [None]
    alone = {k: run(labels, scores, text(family, k), layout)[text(family, k)] for k in ks}
    for t in names:
        k = _measures.parse(t).k
        np.testing.assert_allclose(res[t], expected(family, rows, k), err_msg=t, **TOL)
        np.testing.assert_array_equal(res[t], alone[k], err_msg=t)


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_cutoffs(family):
    labels, scores, layout = ragged(make_rows(2))
    for s in spellings(family):
        if family.at_param:  # IPrec@0.25: "@" sets a parameter in [0, 1]
            assert _measures.parse(f"{s}@0.25").params == {family.at_param: 0.25}
            with pytest.raises(ValueError, match=rf"{family.at_param} of .*must be a number, got 'x'"):
                _measures.parse(f"{s}@x")
            with pytest.raises(ValueError, match=rf"^{family.at_param} in '{s}@5' must be in \[0, 1\], got 5.0$"):
                run(labels, scores, f"{s}@5", layout)
            with pytest.raises(ValueError, match="given twice"):
                _measures.parse(f"{s}({family.at_param}=0.5)@0.25")
        elif family.takes_k:
            for bad in ("0", "-1", "x", "1.5"):
                t = f"{s}@{bad}"
                with pytest.raises(ValueError, match=re.escape(t)):
                    _measures.parse(t)
        else:
            t = f"{s}@5"
            with pytest.raises(ValueError, match=rf"{re.escape(family.name)}.*cutoff.*{re.escape(t)}"):
                _measures.parse(t)
            with pytest.raises(ValueError, match="cutoff"):
                run(labels, scores, t, layout)


# ------------------------------------------------------------------------------------------
# 2. parameters


@pytest.mark.parametrize("family,param", all_params())
def test_default_and_valid_values_pass_check(family, param):
    t = text(family)
    if param.required:  # no default: a value must be given
        with pytest.raises(TypeError, match=rf"{param.name} in 'x' is required"):
            param.check(None, "x")
    # checking is idempotent: a checked value checks to itself
    for v in (*([] if param.name in required(family) else [param.default]), *VALID[param.kind](param)):
        once = param.check(v, t)
        assert _plain(param.check(once, t)) == _plain(once), v
    # the default as written in the name changes nothing
    if literal(param.default) and param.name not in required(family):
        labels, scores, layout = ragged(make_rows(3))
        a = text(family)
        b = text(family, **{param.name: param.default})
        res = run(labels, scores, [a, b], layout)
        np.testing.assert_array_equal(res[a], res[b])


@pytest.mark.parametrize("family,param", all_params())
def test_wrong_values_are_refused_naming_parameter_and_measure(family, param):
    labels, scores, layout = ragged(make_rows(4))
    assert BAD[param.kind]
    for value, what in BAD[param.kind]:
        if value is None and param.default is None:
            continue  # None is the default: valid
        t = text(family, 3 if family.takes_k else None, **{param.name: value})
        # directly through the record
        with pytest.raises((TypeError, ValueError)) as e:
            param.check(value, t)
        msg = str(e.value)
        assert param.name in msg and t in msg, f"{what}: {msg}"
        # through the measure string, where the value can be written as a literal
        if literal(value):
            with pytest.raises((TypeError, ValueError)) as e:
                run(labels, scores, [text(family), t], layout)
            msg = str(e.value)
            assert param.name in msg and t in msg, f"{what}: {msg}"


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_unknown_parameter_is_refused_naming_the_valid_ones(family):
    for bogus in ("no_such_param", "k"):
        t = text(family, 3 if family.takes_k else None, **{bogus: 1})
        with pytest.raises(ValueError) as e:
            _measures.parse(t)
        msg = str(e.value)
        assert bogus in msg and t in msg, msg
        valid = msg.split("valid parameters", 1)
        assert len(valid) == 2, msg
        for p in family.params:
            assert p.name in valid[1], msg
        if not family.params:
            assert "none" in valid[1]


def _plain(value):
    return ("array", value.tolist()) if isinstance(value, np.ndarray) else (type(value).__name__, value)


def _binary_rows(seed):
    return make_rows(seed, max_grade=1)


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_parameter_values_against_the_reference(family):
    """Every valid non-default value of each parameter, alone and two at a time.

    Two batches: grades 0..1 (where a flag meaning "labels are probabilities" holds) and
    grades 0..MAX_GRADE.  On grades 0..1 every single value is accepted.  A refusal is a
    ValueError naming the measure, and is explained: a pair refused on grades 0..1 is a
    conflict of the two values (refused on both batches); a value or pair refused on grades
    0..MAX_GRADE only is so because one of its single values is (the labels do not fit
    it).  Every accepted value equals the reference's.
    """
    singles = [((p.name, v),) for p in family.params for v in non_default(p)]
    pairs = [((p.name, v), (q.name, w)) for p, q in itertools.combinations(family.params, 2)
             for v in non_default(p) for w in non_default(q)]
    batches = {"binary": _binary_rows(5), "graded": make_rows(6)}
    refused = {}  # (batch, k, combo index) -> message
    combos = singles + pairs
    for bname, rows in batches.items():
        labels, scores, layout = ragged(rows)
        for k in cutoffs(family)[::2]:  # None and 3
            for i, combo in enumerate(combos):
                params = dict(combo)
                t = text(family, k, **params)
                try:
                    got = run(labels, scores, t, layout)[t]
                except ValueError as e:
                    assert t in str(e), str(e)
                    refused[bname, k, i] = str(e)
                    continue
                np.testing.assert_allclose(got, expected(family, rows, k, **params), err_msg=t, **TOL)
    index = {repr(c): i for i, c in enumerate(combos)}
    for (bname, k, i), msg in refused.items():
        combo = combos[i]
        if len(combo) == 1:
            assert bname == "graded", f"refused on grades 0..1: {msg}"
            continue
        parts_refused = any((bname, k, index[repr((c,))]) in refused for c in combo)
        conflict = ("binary", k, i) in refused and ("graded", k, i) in refused
        assert parts_refused or conflict, f"refused without a reason among its values: {msg}"


def _call_level_parameters(family):
    """The family's parameters that evaluate() also takes as call-level defaults (rel=, empty=), or skip."""
    call_level = set(inspect.signature(rankjit.evaluate).parameters)
    shared = [p for p in family.params if p.name in call_level and p.call_default]
    if not shared:
        pytest.skip(f"{family.name} has no parameter evaluate() takes as a default")
    return shared


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_call_level_defaults_act_as_the_parameter(family):
    # evaluate's keyword arguments that share a parameter's name (rel=, empty=) are defaults:
    # the same as the parameter in the name, which wins over them
    shared = _call_level_parameters(family)
    rows = make_rows(7)
    labels, scores, layout = ragged(rows)
    k = 3 if family.takes_k else None
    for p in shared:
        values = [v for v in non_default(p) if v is not None]
        for v in values:
            named = text(family, k, **{p.name: v})
            plain = text(family, k)
            a = run(labels, scores, named, layout)[named]
            b = run(labels, scores, plain, layout, **{p.name: v})[plain]
            np.testing.assert_array_equal(a, b, err_msg=f"{p.name}={v!r}")
            np.testing.assert_allclose(a, expected(family, rows, k, **{p.name: v}), err_msg=named, **TOL)
            # the name wins over the call-level default
            other = next((w for w in values if w != v), None)
            if other is not None:
                c = run(labels, scores, named, layout, **{p.name: other})[named]
                np.testing.assert_array_equal(a, c, err_msg=f"{named} with {p.name}={other!r}")


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_call_level_defaults_never_refuse_a_valid_name(family):
    # a call-level default (rel=, empty=) is meant for every measure of the call: it must not
    # make a name that is valid alone (another parameter changed) refused; where the name with
    # both values written in it is valid, it gives its values
    shared = _call_level_parameters(family)
    rows = _binary_rows(8)  # grades 0..1: every single value is valid (test_parameter_values_...)
    labels, scores, layout = ragged(rows)
    k = 3 if family.takes_k else None
    problems = []
    for p in shared:
        for v in [v for v in non_default(p) if v is not None]:
            for q in family.params:
                if q.name == p.name:
                    continue
                for w in non_default(q):
                    t = text(family, k, **{q.name: w})
                    try:
                        got = run(labels, scores, t, layout, **{p.name: v})[t]
                    except ValueError as e:
                        problems.append(f"evaluate({t!r}, {p.name}={v!r}): {e}")
                        continue
                    both = text(family, k, **{q.name: w, p.name: v})
                    try:
                        want = run(labels, scores, both, layout)[both]
                    except ValueError:
                        continue
                    np.testing.assert_array_equal(got, want, err_msg=f"{t} with {p.name}={v!r}")
    assert not problems, "\n".join(problems[:5])


# ------------------------------------------------------------------------------------------
# 3. against the reference, every tie rule


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_against_the_reference(family, ties):
    names = [text(family, k) for k in cutoffs(family)]
    for seed in (10, 11):
        rows = make_rows(seed, n_q=12)
        labels, scores, layout = ragged(rows)
        if ties == "average" and average_refused(family):
            for t in names:
                with pytest.raises(ValueError, match=rf"average.*{re.escape(family.name)}"):
                    run(labels, scores, t, layout, ties=ties)
            return
        res = run(labels, scores, names, layout, ties=ties)
        for k, t in zip(cutoffs(family), names):
            np.testing.assert_allclose(res[t], expected(family, rows, k, ties), err_msg=f"{t} seed {seed}", **TOL)


# ------------------------------------------------------------------------------------------
# 4. layouts


@pytest.mark.parametrize("family,ties", family_ties())
def test_layouts_agree(family, ties):
    names = [text(family, k) for k in cutoffs(family)]
    # ragged rows (empty ones included): offsets, lengths and mask
    rows = make_rows(20, n_q=16)
    flat_y, flat_s, off = ragged(rows)
    base = run(flat_y, flat_s, names, off, ties=ties)
    for how in ("lengths", "mask"):
        labels, scores, layout = padded(rows, how, seed=21)
        got = run(labels, scores, names, layout, ties=ties)
        for t in names:
            np.testing.assert_array_equal(got[t], base[t], err_msg=f"{t} {how}")
    for t, k in zip(names, cutoffs(family)):  # and all of them are the reference's values
        np.testing.assert_allclose(base[t], expected(family, rows, k, ties), err_msg=t, **TOL)
    # rows of one length: dense, with lengths / mask covering every cell, and offsets
    rng = np.random.default_rng(22)
    dense_rows = [(ys, ss) for ys, ss in make_rows(23, n_q=40) if len(ys) == 7]
    assert len(dense_rows) >= 3
    labels = np.array([ys for ys, _ in dense_rows], dtype=np.int64)
    scores = np.array([ss for _, ss in dense_rows], dtype=np.float64)
    dense = run(labels, scores, names, {}, ties=ties)
    layouts = {
        "lengths": {"lengths": np.full(len(dense_rows), 7)},
        "mask": {"mask": np.ones(labels.shape, dtype=bool)},
    }
    for name, layout in layouts.items():
        got = run(labels, scores, names, layout, ties=ties)
        for t in names:
            np.testing.assert_array_equal(got[t], dense[t], err_msg=f"{t} {name}")
    fy, fs, off = ragged(dense_rows)
    got = run(fy, fs, names, off, ties=ties)
    for t in names:
        np.testing.assert_array_equal(got[t], dense[t], err_msg=f"{t} offsets")
    # several systems in one pass, with the one judged= of the batch: each system's row is evaluate() of its scores
    stack = np.stack([scores, scores[:, ::-1], rng.permutation(scores.T).T])
    judged = judged_kw(labels, scores)
    systems = rankjit.evaluate_systems(labels, stack, names, ties=ties, **judged)
    for s in range(stack.shape[0]):
        one = rankjit.evaluate(labels, stack[s], names, ties=ties, per_query=True, **judged)
        for t in names:
            np.testing.assert_array_equal(systems[t][s], one[t], err_msg=f"{t} system {s}")


# ------------------------------------------------------------------------------------------
# 5. means


@pytest.mark.parametrize("family,ties", family_ties())
def test_mean_is_the_mean_of_per_query_values(family, ties):
    # the counts (aggregate "sum": NumQ, NumRet, ...) are summed instead, as ir_measures and trec_eval do;
    # Accuracy (aggregate "defined") is the mean of the queries with a value, as ir_measures leaves the others out
    reduce = {"sum": np.sum, "defined": np.nanmean, "mean": np.mean}[family.aggregate]
    names = [text(family, k) for k in cutoffs(family)]
    rows = make_rows(30, n_q=2300, max_len=6)  # more than two blocks of 1024 queries
    for labels, scores, layout in (ragged(rows), padded(rows, "mask", seed=31)):
        per_query = run(labels, scores, names, layout, ties=ties)
        means = rankjit.evaluate(labels, scores, names, ties=ties, **layout, **judged_kw(labels, scores))
        for t in names:
            assert isinstance(means[t], float)
            np.testing.assert_allclose(means[t], reduce(per_query[t]), rtol=1e-12, atol=0, err_msg=t)
    # a small batch against the reference's mean
    small = make_rows(32)
    labels, scores, layout = ragged(small)
    means = rankjit.evaluate(labels, scores, names, ties=ties, **layout, **judged_kw(labels, scores))
    for t, k in zip(names, cutoffs(family)):
        np.testing.assert_allclose(means[t], reduce(expected(family, small, k, ties)), rtol=1e-12, atol=1e-15)


# ------------------------------------------------------------------------------------------
# 6. dtypes


@pytest.mark.parametrize("ties", ["pessimistic", "average"])
@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_dtypes_change_nothing(family, ties):
    if ties == "average" and average_refused(family):
        ties = "stable"
    names = [text(family, k) for k in cutoffs(family)]
    rows = make_rows(40, n_q=16)
    labels, scores, layout = ragged(rows, np.int64, np.float64)
    base = run(labels, scores, names, layout, ties=ties)
    for t, k in zip(names, cutoffs(family)):
        np.testing.assert_allclose(base[t], expected(family, rows, k, ties), err_msg=t, **TOL)
    for ldt in LABEL_DTYPES:
        for sdt in SCORE_DTYPES:
            for how in ("offsets", "lengths"):
                if how == "offsets":
                    lab, sco, lay = ragged(rows, ldt, sdt)
                else:
                    lab, sco, lay = padded(rows, "lengths", ldt, sdt)
                assert lab.dtype == ldt and sco.dtype == sdt
                got = run(lab, sco, names, lay, ties=ties)
                for t in names:
                    np.testing.assert_array_equal(got[t], base[t], err_msg=f"{t} {np.dtype(ldt)} {np.dtype(sdt)} {how}")


# ------------------------------------------------------------------------------------------
# 7. invariances


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_permuting_documents_within_rows_changes_nothing(family):
    names = [text(family, k) for k in cutoffs(family)]
    rows = make_rows(50, n_q=20, max_len=9, distinct=True)
    labels, scores, layout = ragged(rows)
    base = run(labels, scores, names, layout)
    rng = np.random.default_rng(51)
    for _ in range(3):
        shuffled = []
        for ys, ss in rows:
            perm = rng.permutation(len(ys))
            shuffled.append(([ys[i] for i in perm], [ss[i] for i in perm]))
        lab, sco, lay = ragged(shuffled)
        got = run(lab, sco, names, lay)
        for t in names:
            np.testing.assert_array_equal(got[t], base[t], err_msg=t)


@pytest.mark.parametrize("family,ties", family_ties())
def test_appended_irrelevant_documents_change_what_the_reference_says(family, ties):
    rows = make_rows(60, n_q=16)
    rng = np.random.default_rng(61)
    longer = []
    for ys, ss in rows:
        m = int(rng.integers(1, 4))
        low = min(ss, default=0.0) - 1.0
        longer.append((ys + [0] * m, ss + [low - 0.25 * j for j in range(m)]))
    if ties == "average":  # keep the brute force cheap: the appended scores are distinct
        assert all(len(set(ss[len(ys):])) == len(ss[len(ys):]) for (ys, _), (_, ss) in zip(rows, longer))
    for k in cutoffs(family):
        t = text(family, k)
        ref_before, ref_after = expected(family, rows, k, ties), expected(family, longer, k, ties)
        before = run(*ragged(rows)[:2], t, ragged(rows)[2], ties=ties)[t]
        after = run(*ragged(longer)[:2], t, ragged(longer)[2], ties=ties)[t]
        np.testing.assert_allclose(before, ref_before, err_msg=f"{t} before", **TOL)
        np.testing.assert_allclose(after, ref_after, err_msg=f"{t} after", **TOL)
        # the reference cannot see the appended documents (NaN, Accuracy's undefined value, included)
        blind = (ref_before == ref_after) | (np.isnan(ref_before) & np.isnan(ref_after))
        np.testing.assert_array_equal(after[blind], before[blind], err_msg=f"{t}: rows the reference says unchanged")
        # equal values the reference sums from other terms (RBPResidual: appended unjudged documents move
        # p^n into the sum over unjudged ranks, (1 - p) sum_{n < r <= n + m} p^(r-1) + p^(n+m) = p^n)
        rounding = ~blind & np.isclose(ref_before, ref_after, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(after[rounding], before[rounding], err_msg=f"{t}: rows equal but for rounding",
                                   **TOL)
        changed = ~blind & ~rounding
        assert np.all(after[changed] != before[changed]), f"{t}: rows the reference says changed"


def _undefined_by_default(family):
    """Whether a family's default gives NaN where it has no value (Accuracy without a pair: empty="nan")."""
    return any(p.name == "empty" and p.default == "nan" for p in family.params)


def _probe_rows(seed):
    """Rows where a measure is at its largest: all documents of the top grade, or in the ideal order."""
    rows = make_rows(seed, n_q=12)
    out = []
    for ys, ss in rows:
        out.append((ys, ss))
        out.append(([MAX_GRADE] * len(ys), ss))
        out.append((sorted(ys, reverse=True), [float(len(ys) - i) for i in range(len(ys))]))
    out.append(([MAX_GRADE] * 7, [float(7 - i) for i in range(7)]))
    return out


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_values_in_range(family):
    probes = _probe_rows(70)
    normalised = any(p.name == "empty" for p in family.params)
    for k in cutoffs(family):
        t = text(family, k)
        values = expected(family, probes, k)
        ref_max = max(float(np.max(values[~np.isnan(values)], initial=0.0)), 0.0)  # (NaN: Accuracy without a pair)
        bounded = ref_max <= 1.0
        if normalised:
            assert bounded, f"the reference gives {t} = {ref_max} > 1 although {family.name} is normalised"
        for ties in valid_ties(family):
            for rows in (probes, make_rows(71, n_q=40)):
                labels, scores, layout = ragged(rows)
                v = run(labels, scores, t, layout, ties=ties)[t]
                if _undefined_by_default(family):  # NaN (no value) exactly where the reference has none
                    np.testing.assert_array_equal(np.isnan(v), np.isnan(expected(family, rows, k, ties)), err_msg=t)
                    v = v[~np.isnan(v)]
                assert np.all(np.isfinite(v)), f"{t} {ties}"
                assert np.all(v >= 0.0), f"{t} {ties}: {v.min()}"
                if bounded:
                    assert np.all(v <= 1.0), f"{t} {ties}: {v.max()} > 1"
