"""Render ``:math:`` and ``.. math::`` as MathML at build time.

Browsers draw MathML natively, so the pages need no JavaScript and no network (MathJax is
fetched from a CDN). The LaTeX is converted by ``latex2mathml``; a formula it cannot convert
is a build warning (an error under ``-W``) rather than a silently broken page.
"""

from docutils import nodes
from latex2mathml.converter import convert
from sphinx.util import logging

logger = logging.getLogger(__name__)


def _mathml(latex, node, display):
    try:
        # latex2mathml keeps the escape of \_ inside \text{...}
        return convert(latex, display="block" if display else "inline").replace("\\_", "_")
    except Exception as exc:  # latex2mathml raises many exception types
        logger.warning("cannot convert math %r to MathML: %s", latex, exc, location=node)
        return f"<code>{latex}</code>"


def visit_inline(self, node):
    self.body.append(f'<span class="math">{_mathml(node.astext(), node, False)}</span>')
    raise nodes.SkipNode


def visit_block(self, node):
    if node.get("number"):
        self.body.append(f'<span class="eqno">({node["number"]})</span>')
    # a blank line separates equations of one ``.. math::`` directive
    equations = [part for part in node.astext().split("\n\n") if part.strip()]
    self.body.append('<div class="math">')
    self.body.extend(_mathml(part, node, True) for part in equations)
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("mathml", (visit_inline, None), (visit_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
