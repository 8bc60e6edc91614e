#!/usr/bin/env python3
"""Finds broken links between the project's Markdown files.

Checks every relative link and image in the given Markdown files (default:
every *.md file git tracks, else README.md and docs/*.md): the file or
folder it names must exist, and a #anchor must be a heading of the target
file, slugged as GitHub does. Links to other sites are not fetched (CI has
no network to spare for them). Exit 0 when all hold, 1 naming each broken
link as FILE:LINE. `--self-test` checks the checker.

Standard library only, so that CI needs nothing installed for it.
"""

import os
import re
import subprocess
import sys
import tempfile
import unicodedata

# [text](target) and ![alt](target); the target ends at the first space
# (a title may follow) or the closing parenthesis.
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+[^)]*)?\)")
# [label]: target
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"""<a\s[^>]*(?:name|id)\s*=\s*["']([^"']+)["']""", re.I)
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def slug(heading):
    """GitHub's anchor for a heading's text, before the -1, -2 of repeats."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = CODE_SPAN.sub(lambda m: m.group(2), text)  # code: its content
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.lower()
    kept = []
    for ch in text:
        if ch in " -_" or unicodedata.category(ch)[0] in "LNM":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def lines_outside_code(text):
    """(line number, line) of each line not inside a fenced code block."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)[0] * len(match.group(1))
            continue
        if fence is not None:
            if line.strip().startswith(fence) and line.strip().strip(fence[0]) == "":
                fence = None
            continue
        yield number, line


def anchors(path, cache):
    """Every anchor a Markdown file offers: its headings' slugs, HTML ids."""
    if path not in cache:
        found, seen = set(), {}
        with open(path, encoding="utf-8") as file:
            for _, line in lines_outside_code(file.read()):
                heading = HEADING.match(line)
                if heading:
                    base = slug(heading.group(2))
                    count = seen.get(base, 0)
                    seen[base] = count + 1
                    found.add(base if count == 0 else f"{base}-{count}")
                found.update(HTML_ANCHOR.findall(line))
        cache[path] = found
    return cache[path]


def links(text):
    """(line number, target) of every link outside code."""
    for number, line in lines_outside_code(text):
        line = CODE_SPAN.sub("", line)
        for match in INLINE.finditer(line):
            yield number, match.group(1)
        reference = REFERENCE.match(line)
        if reference:
            yield number, reference.group(1)


def check(files):
    """The broken links of the files, as 'FILE:LINE: message' strings."""
    problems, cache = [], {}
    for name in files:
        with open(name, encoding="utf-8") as file:
            text = file.read()
        for number, target in links(text):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                continue  # another site, mailto:, …
            part, _, anchor = target.partition("#")
            resolved = os.path.normpath(os.path.join(os.path.dirname(name), part)) if part else name
            where = f"{name}:{number}"
            if not os.path.exists(resolved):
                problems.append(f"{where}: {target}: no file {resolved}")
            elif anchor and resolved.endswith(".md") and os.path.isfile(resolved):
                if anchor not in anchors(resolved, cache):
                    problems.append(f"{where}: {target}: no heading #{anchor} in {resolved}")
    return problems


def default_files():
    """Every Markdown file git tracks, else README.md and docs/*.md."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "*.md"], capture_output=True, text=True, check=True
        ).stdout.split()
        if listed:
            return listed
    except (OSError, subprocess.CalledProcessError):
        pass
    return ["README.md"] + sorted(
        os.path.join("docs", name) for name in os.listdir("docs") if name.endswith(".md")
    )


def self_test():
    """The checker finds what is broken and passes what is not."""
    assert slug("The `elicit` command") == "the-elicit-command"
    assert slug("Remote servers (Streamable HTTP)") == "remote-servers-streamable-http"
    assert slug("Idle: exiting when idle (issue 19)") == "idle-exiting-when-idle-issue-19"
    assert slug("What to install, for which desktop, in which order") == (
        "what-to-install-for-which-desktop-in-which-order"
    )
    assert slug("Front-ends → `elicit-gtk`") == "front-ends--elicit-gtk"
    with tempfile.TemporaryDirectory() as root:
        os.mkdir(os.path.join(root, "docs"))
        page = os.path.join(root, "docs", "a.md")
        with open(page, "w", encoding="utf-8") as file:
            file.write("# A page\n\n## Twice\n\n## Twice\n\n```\n## Not a heading\n[x](gone.md)\n```\n")
        readme = os.path.join(root, "README.md")
        with open(readme, "w", encoding="utf-8") as file:
            file.write(
                "# Top\n[ok](docs/a.md) [ok](docs/a.md#twice-1) [ok](#top) [web](https://x.invalid/y)\n"
                "`[code](nowhere.md)` ![img](docs)\n"
                "[bad](docs/b.md)\n[bad](docs/a.md#not-a-heading)\n[bad](#nowhere)\n"
                "[ref]: docs/c.md\n"
            )
        found = check([readme, page])
        expected = [f"{readme}:{n}" for n in (4, 5, 6, 7)]
        assert [p.split(": ")[0] for p in found] == expected, found
    print("check-links self-test ok")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    files = sys.argv[1:] or default_files()
    problems = check(files)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} broken link(s) in {len(files)} file(s)", file=sys.stderr)
        return 1
    print(f"links ok: {len(files)} Markdown files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
