"""Sphinx configuration of the aucforest documentation.

Build (from the repository root, warnings as errors):

    sphinx-build -W --keep-going -b html docs docs/_build/html

Why Sphinx with numpydoc and autosummary: the docstrings are written in the
numpydoc format, as scikit-learn's are, and this is scikit-learn's own
toolchain. autosummary generates one page per public name from the docstrings
at build time (docs/generated/, not committed), so the API reference cannot
go stale; numpydoc renders the Parameters, Returns and Attributes sections;
MyST-Parser reads the Markdown guides (user_guide.md, metrics.md, the
evidence pages and the changelog) as they are, so they stay readable on
GitHub too. tests/test_docstrings.py checks the same docstrings with
numpydoc's validator.
"""
import os
import re
import sys
from pathlib import Path

import aucforest

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
os.environ.setdefault("COLUMNS", "100")  # argparse wraps --help to the terminal width

project = "aucforest"
author = "the aucforest developers"
copyright = "the aucforest developers"
release = version = aucforest.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "aucforest_cli",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "README.md"]
templates_path = ["_templates"]

# API reference: one generated page per public name (docs/generated/).
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "member-order": "groupwise"}
autodoc_typehints = "none"  # the numpydoc sections give the types
numpydoc_show_class_members = False  # the class template lists the members
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# Markdown: headings get anchors (the guides link to "#5-the-command-line"),
# $...$ and $$...$$ are maths.
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath", "colon_fence"]

html_theme = "pydata_sphinx_theme"
html_title = f"aucforest {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_show_sourcelink = False


def skip_member(app, what, name, obj, skip, options):
    """Leave out the fields of result tuples (documented as Attributes), what
    builtins give (tuple's count and index, an exception's args), and the
    metadata-routing setters scikit-learn generates per estimator."""
    if type(obj).__name__ == "_tuplegetter":
        return True
    if getattr(getattr(obj, "__objclass__", None), "__module__", None) == "builtins":
        return True
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return skip


SKLEARN_REF = re.compile(r":ref:`([^`<]*?)\s*(?:<[^`>]*>)?`")
LITERAL = re.compile(r"(``.+?``|`[^`]*`)")
BARE_NAME_ = re.compile(r"(?<![\w*|:\\\]/.-])([A-Za-z]\w*_)(?=$|[\s.,;!?)\]}'\"])")


def plain_docstrings(app, what, name, obj, options, lines):
    """Before numpydoc: make two habits of docstrings render without warnings.

    * scikit-learn's inherited methods (``score``, ``get_params`` ...) cite
      labels of scikit-learn's own documentation (``:ref:`User Guide
      <metadata_routing>```): keep the text, drop the link.
    * A fitted attribute named in prose or in a type (``classes_``, ``of
      shape (n_features_in_,)``) reads, in reStructuredText, as a link to a
      target of that name: show it as code. Bars of plain-text maths
      (``|r_1 - r_0|``) read as a substitution: escape them. Only prose and
      types are touched: not the names of ``name : type`` lines, not examples,
      literal blocks, tables or text already in backquotes.
    """
    if getattr(obj, "__module__", "").startswith("sklearn"):
        lines[:] = [SKLEARN_REF.sub(r"\1", line) for line in lines]
        return
    literal_indent = None
    for index, line in enumerate(lines):
        text = line.lstrip()
        indent = len(line) - len(text)
        if literal_indent is not None:
            if not text or indent > literal_indent:
                continue
            literal_indent = None
        if text.endswith("::"):
            literal_indent = indent
        if text.startswith((">>>", "...", "|", "+")) or (indent == 0 and re.fullmatch(
                r"[\w, *]+", text)):
            continue
        head, prose = "", line
        if indent == 0 and " : " in text:  # "name : type": the type only
            head, _, prose = line.partition(" : ")
            head += " : "
        lines[index] = head + "".join(
            piece if LITERAL.fullmatch(piece) else
            BARE_NAME_.sub(r"``\1``", re.sub(r"(?<!\\)\|", r"\\|", piece))
            for piece in LITERAL.split(prose))


def setup(app):
    app.connect("autodoc-skip-member", skip_member)
    app.connect("autodoc-process-docstring", plain_docstrings, priority=400)  # before numpydoc
