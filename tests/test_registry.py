"""The registry of list-measure families (rankjit._registry): the one list the others derive from."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import reference as ref  # tests/ is on sys.path, as for the other test modules
from rankjit import _measures
from rankjit._kernels import engine as _engine
from rankjit._kernels import layout as Lay
from rankjit._registry import GROUPS, INPUT_FAMILIES, LIST_FAMILIES
from rankjit._validation import as_batch, engine_batch, scan

DOCS = Path(__file__).resolve().parent.parent / "docs" / "metrics.md"


def test_the_reference_implements_every_registered_family():
    # tests/reference/lists.py keeps its own list, written from the definitions: the two must agree
    assert sorted(f.name for f in LIST_FAMILIES) == sorted(ref.FAMILIES)


def test_docs_name_every_registered_family():
    text = DOCS.read_text()
    missing = [f.name for f in LIST_FAMILIES if not re.search(rf"\b{re.escape(f.name)}\b", text)]
    assert not missing, f"docs/metrics.md does not name {missing}"


@pytest.mark.parametrize("family", LIST_FAMILIES, ids=lambda f: f.name)
def test_every_spelling_parses_to_its_family(family):
    for spelling in (family.name, family.name.lower(), *family.aliases):
        text = f"{spelling}@5" if family.takes_k else spelling
        assert _measures.parse(text).family == family.name
    if not family.takes_k and not family.at_param:  # IPrec@0.2 sets recall (tests/test_families.py)
        with pytest.raises(ValueError, match="cutoff"):
            _measures.parse(f"{family.name}@5")


def test_aliases_name_one_family_each():
    spellings = [a for f in LIST_FAMILIES + INPUT_FAMILIES for a in {f.name.lower(), *f.aliases}]
    assert len(spellings) == len(set(spellings))
    assert all(a == a.lower() for f in LIST_FAMILIES + INPUT_FAMILIES for a in f.aliases)


@pytest.mark.parametrize("family", INPUT_FAMILIES, ids=lambda f: f.name)
def test_input_families_parse_without_importing_their_module_and_name_their_functions(family):
    # the registry, not an import side effect, makes the diversity and preference names known:
    # parsing one imports neither module; computing it calls its module's evaluate_measure
    import importlib
    import subprocess
    import sys

    code = ("import sys\nfrom rankjit import _measures\n"
            f"m = _measures.parse({family.name + '@5'!r})\n"
            "print(m.family, m.external, sorted(n for n in ('rankjit.diversity', 'rankjit.preference') "
            "if n in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [family.name, "True", "[]"]
    for spelling in family.aliases:
        assert _measures.parse(f"{spelling}@5").family == family.name
    module = importlib.import_module(family.module)
    assert callable(module.evaluate_measure) and callable(getattr(module, family.function))
    assert family.needs in (("nuggets",), ("scores_b",))


@pytest.mark.parametrize("family", LIST_FAMILIES, ids=lambda f: f.name)
def test_a_family_alone_compiles_its_group_alone(family):
    # the engine's variant choice reads the registry's group: a plan of one family asks for
    # the measure pass of that group and no other
    labels = np.array([[2, 0, 1, 0, 3]], dtype=np.int8)
    scores = np.array([[0.5, 0.4, 0.3, 0.2, 0.1]], dtype=np.float32)
    requests = _measures.requests([family.example], {"rel": 1, "empty": "zero"})
    batch = engine_batch(scan(as_batch(labels, scores)))
    plan = _measures.build_plan(requests, batch, 0, None)
    variant = _engine.variant_for(plan, 0, False, batch.max_count)
    flags = {group: getattr(variant, group) for group in GROUPS}
    assert flags == {group: group == family.group for group in GROUPS}


@pytest.mark.parametrize("family", LIST_FAMILIES, ids=lambda f: f.name)
def test_every_family_has_a_plan_row_builder_and_valid_parameters(family):
    from rankjit._registry import KINDS, VIEWS

    assert family.row in _measures.ROW_BUILDERS
    assert family.reads in VIEWS
    for param in family.params:
        assert param.kind in KINDS
        if param.required:  # IPrec's recall, max_rel: no default to check
            continue
        assert param.check(param.default, family.name) is not None or param.default is None


def test_families_sharing_a_measure_code_have_distinct_kinds():
    # the plan row tells families of one code apart by Family.kind (I_SET_KIND, I_CWL_KIND): set measures and
    # counts, Bpref / infAP, the C/W/L walks; a code with one family needs no kind
    by_code = {}
    for family in LIST_FAMILIES:
        by_code.setdefault(family.code, []).append(family)
    shared = {code: fams for code, fams in by_code.items() if len(fams) > 1 and fams[0].row in ("set", "judgments",
                                                                                                  "cwl")}
    assert set(shared) == {Lay.SET, Lay.JUDGMENTS, Lay.CWL}
    for code, fams in shared.items():
        kinds = [f.kind for f in fams]
        assert len(set(kinds)) == len(kinds), [(f.name, f.kind) for f in fams]


@pytest.mark.parametrize("family", LIST_FAMILIES, ids=lambda f: f.name)
def test_each_family_has_a_public_function_taking_every_parameter(family):
    import inspect

    import rankjit

    assert family.function in rankjit.__all__
    signature = inspect.signature(getattr(rankjit, family.function))
    assert ("k" in signature.parameters) == family.takes_k
    for param in family.params:
        assert param.name in signature.parameters, f"rankjit.{family.function} lacks {param.name}="
        default = signature.parameters[param.name].default
        if param.required:  # no default in the function either
            assert default is inspect.Parameter.empty, param.name
            continue
        # the same default once normalised (empty=None and empty="zero" are one value)
        assert param.check(default, family.name) == param.check(param.default, family.name), param.name


def test_the_docs_index_lists_the_registry():
    # (the index is generated, rankjit._docs_families: tests/test_docs_families.py holds the whole block to it)
    rows = re.findall(r"^\| \[(\S+)\]\(#[\w-]+\) \| `rankjit\.(\w+)` \| `([^`]+)` \| (.+) \|$", DOCS.read_text(),
                      flags=re.M)
    assert rows == [(f.name, f.function, f.example, f.summary) for f in LIST_FAMILIES]


def test_the_demo_and_the_warm_up_take_one_example_of_each_family():
    from rankjit._demo import DEMO_MEASURES
    from rankjit._registry import EXAMPLES
    from rankjit._warmup import MEASURE_SETS

    assert [_measures.parse(text).family for text in EXAMPLES] == [f.name for f in LIST_FAMILIES if not f.needs]
    assert tuple(DEMO_MEASURES) == EXAMPLES and tuple(MEASURE_SETS[0]) == EXAMPLES


def test_trec_eval_names_of_the_registry_and_of_the_cli_table_agree():
    # rankjit trec_eval's table (rankjit.io._cli.TREC_TABLE) computes some measures with the engine
    # (a measure string) and the rest with trec_eval's own counts; every trec_eval name a family
    # claims must be in the table, and every engine entry must be computed by the family claiming it
    from rankjit.io._cli import TREC_TABLE

    claimed = {name: f.name for f in LIST_FAMILIES for name in f.trec_eval}
    assert set(claimed) <= set(TREC_TABLE), sorted(set(claimed) - set(TREC_TABLE))
    engine = {name: _measures.parse(entry.compute.template.format(5)).family
              for name, entry in TREC_TABLE.items() if hasattr(entry.compute, "template")}
    assert engine, "no engine entry found: the table's _core marker changed"
    for name, family in engine.items():
        if name.startswith("gm_"):  # gm_map: the geometric mean of map's values
            name = name[3:]
        assert claimed.get(name) == family, (name, family)


@pytest.mark.parametrize("family", INPUT_FAMILIES, ids=lambda f: f.name)
def test_every_input_family_has_valid_parameters(family):
    # as for the list families: a kind of KINDS, a default its own check takes; evaluate() resolves them with it
    from rankjit._registry import KINDS, Param

    assert family.params and all(isinstance(p, Param) for p in family.params)
    assert len({p.name for p in family.params}) == len(family.params)
    assert family.defaults == {p.name: p.default for p in family.params}
    for param in family.params:
        assert param.kind in KINDS, (family.name, param.name)
        assert not param.required, (family.name, param.name)  # every input-family parameter has a default
        assert param.check(param.default, family.name) is not None or param.default is None
    assert _measures.resolve(_measures.parse(family.name), {}).keys() == family.defaults.keys()


@pytest.mark.parametrize("family", INPUT_FAMILIES, ids=lambda f: f.name)
def test_input_family_defaults_are_their_functions(family):
    # the registry's default of each parameter is the public function's (empty: evaluate's, so left out)
    import importlib
    import inspect

    signature = inspect.signature(getattr(importlib.import_module(family.module), family.function))
    for param in family.params:
        if param.name == "empty":
            continue
        default = signature.parameters[param.name].default
        assert param.check(default, family.name) == param.check(param.default, family.name), param.name


_NUG = np.array([[[1, 0], [0, 2], [1, 1]]])
_S = np.array([[3.0, 2.0, 1.0]])
_LABELS = np.array([[1, 0, 1]])
_S_B = np.array([[1.0, 3.0, 2.0]])

#: a bad value of every input-family parameter, through evaluate(): (measure, error, the whole message)
BAD_INPUT_PARAMS = [
    ("alpha_nDCG(alpha=2)@5", ValueError, "alpha in 'alpha_nDCG(alpha=2)@5' must be in [0, 1], got 2"),
    ("ERR_IA(alpha='0.5')@5", TypeError,
     "alpha in \"ERR_IA(alpha='0.5')@5\" must be a number in [0, 1], got '0.5' of type str"),
    ("NRBP(beta=-0.1)", ValueError, "beta in 'NRBP(beta=-0.1)' must be in [0, 1], got -0.1"),
    ("nNRBP(beta=True)", TypeError,
     "beta in 'nNRBP(beta=True)' must be a number in [0, 1], got the boolean True (booleans are not numbers here)"),
    ("alpha_DCG(bound=0)@5", TypeError, "bound in 'alpha_DCG(bound=0)@5' must be True or False, got 0"),
    ("ERR_IA(normalize='yes')@5", TypeError,
     "normalize in \"ERR_IA(normalize='yes')@5\" must be True or False, got 'yes'"),
    ("P_IA(rel=0)@5", ValueError,
     "rel in 'P_IA(rel=0)@5' must be > 0 (judgments >= rel are relevant) or None (judgments > 0), got 0"),
    ("AP_IA(rel='2')", TypeError, "rel in \"AP_IA(rel='2')\" must be a number > 0 or None, got '2' of type str"),
    ("S_recall(empty='half')@5", ValueError,
     "unknown empty='half' in \"S_recall(empty='half')@5\"; valid values: 'zero', 'one', 'nan'"),
    ("RPP(weights='harmonic')", ValueError,
     "unknown weights='harmonic' in \"RPP(weights='harmonic')\"; valid values: 'uniform', 'inverse', 'dcg', or a "
     "1-D array of per-recall-level weights (level 1, 2, ...)"),
    ("RPP(weights=[1.0, -1.0])", ValueError,
     "weights in 'RPP(weights=[1.0, -1.0])' must hold finite, non-negative weights"),
    ("RPP(weights=[0.0, 1.0])", ValueError,
     "weights in 'RPP(weights=[0.0, 1.0])' must give the first recall level a weight > 0 (weights are "
     "normalised over the query's recall levels)"),
    ("RPP(graded=1)", TypeError, "graded in 'RPP(graded=1)' must be True or False, got 1"),
    ("RPP(empty='one')", ValueError, "unknown empty='one' in \"RPP(empty='one')\"; valid values: 'nan', 'zero' "
     "('nan' marks the query undefined (the reference code drops it), 'zero' gives it 0; 'one' would break the "
     "antisymmetry of a against b and b against a)"),
    ("LexiPrecision(variant='sign')", ValueError,
     "unknown variant='sign' in \"LexiPrecision(variant='sign')\"; valid values: 'sgn', 'rr'"),
    ("LexiRecall(rel='x')", TypeError, "rel in \"LexiRecall(rel='x')\" must be a finite number, got 'x' of type str"),
    ("LexiPrecision(rel=1e999)", ValueError, "rel in 'LexiPrecision(rel=1e999)' must be a finite number, got inf"),
]


def test_every_input_family_parameter_has_a_bad_value_test():
    tested = {(_measures.parse(m).family, name) for m, _, _ in BAD_INPUT_PARAMS
              for name in _measures.parse(m).params}
    names = {p.name for f in INPUT_FAMILIES for p in f.params}
    assert {name for _, name in tested} == names


@pytest.mark.parametrize("measure, error, message", BAD_INPUT_PARAMS, ids=[m for m, _, _ in BAD_INPUT_PARAMS])
def test_a_bad_input_family_parameter_is_refused_by_evaluate(measure, error, message):
    import rankjit

    family = _measures.parse(measure).family
    if "nuggets" in _measures.EXTERNAL[family].needs:
        call = lambda: rankjit.evaluate(_NUG.sum(-1), _S, [measure], nuggets=_NUG)  # noqa: E731
    else:
        call = lambda: rankjit.evaluate(_LABELS, _S, [measure], scores_b=_S_B)  # noqa: E731
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call()
    # refused when evaluate() resolves the measure, before any data is read (no nuggets=, no scores_b= needed),
    # except for what the kind does not say (a weights array's own rules), which the module checks with the data
    if "weights=[" not in measure:
        with pytest.raises(error, match=f"^{re.escape(message)}$"):
            _measures.requests([measure], {"rel": None, "empty": "zero"})
