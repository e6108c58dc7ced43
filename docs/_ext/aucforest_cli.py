"""The ``aucforest-help`` directive: the command line's ``--help`` texts, read from
the installed command at build time, so the reference follows the code.

    .. aucforest-help::

gives ``aucforest --help`` and then ``aucforest COMMAND --help`` for every
subcommand the top-level help lists (argparse's ``{fit,predict,...}`` or one
command per line, indented by four spaces).
"""
import contextlib
import io
import re

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


def help_text(arguments):
    """What ``aucforest ARGUMENTS`` prints (``--help`` exits through SystemExit)."""
    from aucforest.cli import main

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.suppress(SystemExit):
        main(arguments)
    return buffer.getvalue()


class AucforestHelp(SphinxDirective):
    has_content = False

    def run(self):
        top = help_text(["--help"])
        listed = re.search(r"\{([\w,-]+)\}", top)
        commands = (listed.group(1).split(",") if listed
                    else re.findall(r"^ {4}([a-z][\w-]*)(?:\s|$)", top, flags=re.MULTILINE))
        if not commands:
            raise self.error("aucforest --help lists no subcommands")
        result = [heading("aucforest --help"), nodes.literal_block(top, top)]
        for command in commands:
            text = help_text([command, "--help"])
            result += [heading(f"aucforest {command} --help"), nodes.literal_block(text, text)]
        return result


def heading(command):
    """A rubric showing the command as code (no smart dashes)."""
    return nodes.rubric("", "", nodes.literal(command, command))


def setup(app):
    app.add_directive("aucforest-help", AucforestHelp)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
