// MathJax for the formulas that pymdownx.arithmatex marks (generic mode: \( \) inline, \[ \] display),
// e.g. the statistics docstrings' math (docs/_griffe_math.py turns Sphinx's math into arithmatex's).
window.MathJax = {
  tex: {inlineMath: [["\\(", "\\)"]], displayMath: [["\\[", "\\]"]], processEscapes: true, processEnvironments: true},
  options: {ignoreHtmlClass: ".*|", processHtmlClass: "arithmatex"},
};
document$.subscribe(() => {
  MathJax.startup.output.clearCache();
  MathJax.typesetClear();
  MathJax.texReset();
  MathJax.typesetPromise();
});
