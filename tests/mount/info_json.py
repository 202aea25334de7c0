#!/usr/bin/python3
"""info_json.py CMD ARGS - checks of .info.json (docs/info-json.md) against
the .info text it comes from, parsed here on its own:

  info INFO_TEXT INFO_JSON       every fact, warning, damaged object and
                                 table cell of .info is in the JSON, as text
                                 or as the integer it spells, and nothing else
  ls LS_JSON DIR                  ls --json -R against the mount DIR: the
                                 same names in strcmp order, types, sizes
  lsnode LS_JSON SIZE TYPE       ls --json of one node: its size and type

Prints one "FAIL: ..." line per difference and exits 1 if there is one."""
import json
import os
import stat
import sys

fails = []


def check(ok, what):
    if not ok:
        fails.append(what)


def parse_info(text):
    """facts: key -> [values]; tables: [(columns, rows)]."""
    facts, tables, cur = {}, [], None
    for line in text.split("\n"):
        if "\t" in line:
            cells = line.split("\t")
            if cur is None:
                cur = (cells, [])
                tables.append(cur)
            else:
                cur[1].append(cells)
            continue
        cur = None
        if line.find(": ") > 0:
            k, v = line.split(": ", 1)
            facts.setdefault(k, []).append(v)
    return facts, tables


def as_text(v):
    """A JSON value as the .info text it came from: integers exactly."""
    if isinstance(v, bool) or v is None:
        raise ValueError("unexpected %r" % (v,))
    if isinstance(v, int):
        check(abs(v) < 10 ** 15, "integer %d has more than 15 digits" % v)
        return str(v)
    check(isinstance(v, str), "value %r is neither string nor integer" % (v,))
    return v


def cmd_info(text_path, json_path):
    text = open(text_path, encoding="utf-8", errors="surrogateescape").read()
    j = json.load(open(json_path))
    facts, tables = parse_info(text)
    check(j["schema"] == 1, "schema %r" % j.get("schema"))
    check(j["format"] == facts["format"][0], "format %r vs %r" % (j["format"], facts["format"]))
    check(j["source"] == facts["source"][0], "source")
    check(list(j["facts"]) == list(facts), "fact keys %s vs %s" % (list(j["facts"]), list(facts)))
    for k, vals in facts.items():
        got = j["facts"].get(k)
        got = got if isinstance(got, list) else [got]
        check(len(vals) == 1 or len(got) == len(vals), "%s: a repeated key is a list" % k)
        check([as_text(v) for v in got] == vals, "fact %s: %r vs %r" % (k, got, vals))
    check(j["warnings"] == facts.get("warning", []), "warnings %r" % j["warnings"])
    check(j["damaged"] == facts.get("damaged", []), "damaged %r" % j["damaged"])
    jt = ([(j["columns"], j["table"])] if j["columns"] else []) + \
         [(t["columns"], t["rows"]) for t in j["tables"]]
    check(len(jt) == len(tables), "%d tables vs %d" % (len(jt), len(tables)))
    for (jcols, jrows), (cols, rows) in zip(jt, tables):
        check(jcols == cols, "columns %r vs %r" % (jcols, cols))
        check(len(jrows) == len(rows), "%d rows vs %d" % (len(jrows), len(rows)))
        for jr, r in zip(jrows, rows):
            check(list(jr) == cols, "row keys %r" % list(jr))
            cells = [as_text(jr[c]) for c in cols if jr[c] is not None]
            check("\t".join(cells) == "\t".join(r), "row %r vs %r" % (jr, r))
    print("info: %d facts, %d tables, %d rows, %d warnings, %d damaged" %
          (len(facts), len(tables), sum(len(r) for _, r in tables),
           len(j["warnings"]), len(j["damaged"])))


def kind(st):
    return "dir" if stat.S_ISDIR(st.st_mode) else "link" if stat.S_ISLNK(st.st_mode) else "file"


def walk(node, d):
    """Compare node's entries with directory d of the mount; the count."""
    names = [e["name"] for e in node["entries"]]
    check(names == sorted(os.listdir(d)), "%s: %r vs %r" % (d, names[:8], sorted(os.listdir(d))[:8]))
    n = 0
    for e in node["entries"]:
        p = os.path.join(d, e["name"])
        if not os.path.lexists(p):
            continue
        st = os.lstat(p)
        n += 1
        check(e["type"] == kind(st), "%s: type %r" % (p, e["type"]))
        check(e["mode"] == "%04o" % stat.S_IMODE(st.st_mode), "%s: mode %r" % (p, e["mode"]))
        if e["type"] == "file" and e["name"] != ".info":
            check(e["size"] == st.st_size, "%s: size %r vs %d" % (p, e["size"], st.st_size))
        if e["type"] == "link":
            check(e.get("target") == os.readlink(p), "%s: target" % p)
        check(("entries" in e) == (e["type"] == "dir"), "%s: entries iff directory" % p)
        if e["type"] == "dir":
            n += walk(e, p)
    return n


def cmd_ls(json_path, mnt):
    j = json.load(open(json_path))
    check(j["schema"] == 1, "schema")
    check(j["node"]["type"] == "dir", "the root is a directory")
    print("ls: %d nodes" % walk(j["node"], mnt))


def cmd_lsnode(json_path, size, kind):
    n = json.load(open(json_path))["node"]
    check(n["size"] == int(size), "size %r vs %s" % (n["size"], size))
    check(n["type"] == kind, "type %r vs %s" % (n["type"], kind))


if __name__ == "__main__":
    {"info": cmd_info, "ls": cmd_ls, "lsnode": cmd_lsnode}[sys.argv[1]](*sys.argv[2:])
    for f in fails:
        print("FAIL:", f)
    sys.exit(1 if fails else 0)
