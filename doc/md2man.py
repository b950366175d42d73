#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a man(7) page from one of doc/*.md, so that the markdown a reader
opens on the web and the installed page are one text.

    md2man.py NAME SECTION DATE VERSION DESCRIPTION < doc/X.md > NAME.SECTION

It reads the markdown these files use and nothing more: headings, paragraphs,
fenced code, "- " and "1. " lists, pipe tables (as tbl(7)), `code`, **bold**,
*emphasis* and [links](target). Anything else is a paragraph's text."""
import re
import sys


def escape(text):
    """roff's own characters, in running text or in code."""
    text = text.replace("\\", "\\e")
    # Non-ASCII as roff's own escapes: every formatter reads those.
    return "".join(c if ord(c) < 128 else "\\[u%04X]" % ord(c) for c in text)


def line_start(text):
    """A line that roff would read as a request reads as text."""
    return "\\&" + text if text[:1] in (".", "'") else text


def inline(text):
    parts = re.split(r"(`[^`]*`)", text)
    out = []
    for part in parts:
        if part.startswith("`") and part.endswith("`") and len(part) >= 2:
            out.append("\\fB" + escape(part[1:-1]).replace("-", "\\-") + "\\fR")
            continue
        part = escape(part)
        part = re.sub(r"\[([^\]]*)\]\((https?://[^)]*)\)", r"\1 <\2>", part)
        part = re.sub(r"\[([^\]]*)\]\(([^)]*)\)", r"\1 (\2)", part)
        part = re.sub(r"\*\*([^*]+)\*\*", r"\\fB\1\\fR", part)
        part = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"\\fI\1\\fR", part)
        out.append(part)
    return "".join(out)


def text_lines(text):
    """Running text, a sentence a line (as roff wants its sentence ends)."""
    text = inline(text)
    out = []
    for sentence in re.split(r"(?<=[a-z0-9)][.?!]) +(?=[A-Z(])", text):
        line = ""
        for word in sentence.split():
            if line and len((line + " " + word).encode()) > 78:
                out.append(line_start(line))
                line = word
            else:
                line = line + " " + word if line else word
        if line:
            out.append(line_start(line))
    return out


def table(rows):
    cells = [[c.strip() for c in r.strip().strip("|").split("|")] for r in rows]
    cells = [cells[0]] + [r for r in cells[2:]]
    width = max(len(r) for r in cells)
    out = [".TS", "allbox tab(\t);", " ".join(["lb"] * width), " ".join(["l"] * width) + "."]
    for i, row in enumerate(cells):
        row = row + [""] * (width - len(row))
        out.append("\t".join("T{\n" + "\n".join(text_lines(c) or ["\\&"]) + "\nT}" for c in row))
    out.append(".TE")
    return out


def convert(src, name, section, date, version, description):
    out = ['.\\" SPDX-License-Identifier: MIT',
           '.\\" Written by doc/md2man.py from the markdown source; edit that.',
           '.TH %s %s "%s" "aiter-probe %s" "aiter-probe"' % (name.upper(), section, date, version),
           ".SH NAME", "%s \\- %s" % (name, escape(description))]
    lines = src.split("\n")
    i = 0
    para = []

    def flush():
        if para:
            if not out[-1].startswith((".SH", ".SS")) and out[-2:-1] != [".SH NAME"]:
                out.append(".PP")
            out.extend(text_lines(" ".join(para)))
            para.clear()

    while i < len(lines):
        line = lines[i]
        m = re.match(r"^(#+) +(.*)$", line)
        if line.startswith("```"):
            flush()
            if not out[-1].startswith((".SH", ".SS")):
                out.append(".PP")
            out.append(".EX")
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                out.append(line_start(escape(lines[i])))
                i += 1
            out.append(".EE")
        elif m:
            flush()
            title = re.sub(r"`([^`]*)`", r"\1", m.group(2))
            if len(m.group(1)) <= 2:
                out.append('.SH "%s"' % escape(title.upper()).replace('"', ""))
            else:
                out.append('.SS "%s"' % escape(title).replace('"', ""))
        elif line.startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(lines[i])
                i += 1
            out.extend(table(rows))
            continue
        elif re.match(r"^ *(- |\d+\. )", line):
            flush()
            mark = re.match(r"^ *(- |\d+\. )", line).group(1).strip()
            item = [line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else ""]
            i += 1
            while i < len(lines) and lines[i].startswith("  ") and not re.match(r"^ *(- |\d+\. )", lines[i]):
                item.append(lines[i].strip())
                i += 1
            out.append(".IP \\(bu 2" if mark == "-" else ".IP %s 4" % mark)
            out.extend(text_lines(" ".join(item)))
            continue
        elif not line.strip():
            flush()
        else:
            para.append(line.strip())
        i += 1
    flush()
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    name, section, date, version, description = sys.argv[1:6]
    sys.stdout.write(convert(sys.stdin.read(), name, section, date, version, description))
