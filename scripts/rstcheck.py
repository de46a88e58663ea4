#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Part of `make check`: every Documentation/ file must be valid reStructuredText.

Parses each .rst file with docutils (python3-docutils) and reports every message of
level WARNING or above: malformed tables, bad indentation, unknown roles. The Sphinx
additions the documents use (the `doc` role, the `toctree` directive) are accepted
without checking their targets, except that a `:doc:` target must name an existing file.
Prints one KTAP-style line per file; exits 1 if any file has a problem.
"""
import os
import re
import sys

import docutils.core
import docutils.nodes
import docutils.parsers.rst
import docutils.utils
from docutils.parsers.rst import Directive, directives, roles

missing = []


def doc_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    target = re.sub(r".*<(.*)>$", r"\1", text).strip()
    base = os.path.dirname(inliner.document.current_source or ".")
    if not os.path.exists(os.path.join(base, target + ".rst")):
        missing.append(f"line {lineno}: :doc: target {target!r} does not exist")
    return [docutils.nodes.literal(rawtext, text)], []


class Toctree(Directive):
    has_content = True
    optional_arguments = 0
    option_spec = {"maxdepth": directives.unchanged, "caption": directives.unchanged}

    def run(self):
        base = os.path.dirname(self.state.document.current_source or ".")
        for entry in self.content:
            entry = entry.strip()
            if entry and not os.path.exists(os.path.join(base, entry + ".rst")):
                missing.append(f"toctree entry {entry!r} does not exist")
        return []


roles.register_local_role("doc", doc_role)
directives.register_directive("toctree", Toctree)


def check(path):
    missing.clear()
    with open(path, encoding="utf-8") as f:
        src = f.read()
    msgs = []

    class Collect:
        def write(self, s):
            msgs.append(s.rstrip())

    docutils.core.publish_doctree(
        src,
        source_path=path,
        settings_overrides={
            "report_level": docutils.utils.Reporter.WARNING_LEVEL,
            "halt_level": docutils.utils.Reporter.SEVERE_LEVEL + 1,
            "warning_stream": Collect(),
        },
    )
    return [m for m in msgs if m] + missing


def main(argv):
    files = argv[1:]
    bad = 0
    print("TAP version 13")
    print(f"1..{len(files)}")
    for n, path in enumerate(files, 1):
        problems = check(path)
        for p in problems:
            for line in p.splitlines():
                print(f"# {line}")
        if problems:
            bad += 1
            print(f"not ok {n} rst {path}")
        else:
            print(f"ok {n} rst {path}")
    print(f"{len(files) - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
